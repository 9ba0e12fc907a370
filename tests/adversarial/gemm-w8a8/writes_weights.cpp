// expect: wrong_answer
// message: input W was modified
// Cheat: computes Y right, then stores the quantized activations' last byte into W (an int8 input), as a kernel
// that reuses an input as scratch would. The output passes; the int8 input that comes back does not.
#include <cmath>
#include <cstddef>
#include <cstdint>
void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    int8_t last = 0;
    for (int i = 0; i < M; ++i) {
        const float* x = X + (size_t)i * K;
        float amax = 0.0f;
        for (int k = 0; k < K; ++k) amax = std::fmax(amax, std::fabs(x[k]));
        const float s = amax / 127.0f;
        for (int j = 0; j < N; ++j) {
            int32_t acc = 0;
            for (int k = 0; k < K; ++k) {
                const int8_t q = s > 0.0f ? (int8_t)std::nearbyint(x[k] / s) : 0;
                acc += (int32_t)q * (int32_t)W[(size_t)j * K + k];
                last = q;
            }
            Y[(size_t)i * N + j] = (s * sw[j]) * (float)acc;
        }
    }
    int8_t* w = const_cast<int8_t*>(W);
    w[0] = (int8_t)(w[0] == last ? last + 1 : last);  // a value W[0] did not hold
}
