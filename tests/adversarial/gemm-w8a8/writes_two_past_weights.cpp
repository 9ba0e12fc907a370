// expect: wrong_answer
// message: bytes past the end of W
// Bug (bounds): writes the byte two past the end of W, an int8 input. The guards watch 16-bit words from the
// first even byte after a buffer, so for an int8 buffer of odd length one byte of slack goes unwatched; the
// second byte past the end is always watched. The answer itself is right.
#include <cmath>
#include <cstddef>
#include <cstdint>
void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        const float* x = X + (size_t)i * K;
        float amax = 0.0f;
        for (int k = 0; k < K; ++k) amax = std::fmax(amax, std::fabs(x[k]));
        const float s = amax / 127.0f;
        for (int j = 0; j < N; ++j) {
            int32_t acc = 0;
            for (int k = 0; k < K; ++k)
                acc += (int32_t)(s > 0.0f ? (int8_t)std::nearbyint(x[k] / s) : 0) * (int32_t)W[(size_t)j * K + k];
            Y[(size_t)i * N + j] = (s * sw[j]) * (float)acc;
        }
    }
    const_cast<int8_t*>(W)[(size_t)N * K + 1] = 0x55;
}
