// CPU rung 1 -- naive: quantize each row of X as the statement defines it, then one int32 dot product per
// element of Y and the float32 epilogue.
//
// s = max|x| / 127 and q = x / s are float32 divisions (IEEE, correctly rounded: no -ffast-math here), and
// std::nearbyint rounds the quotient half to even in the default rounding mode. The products of two int8
// values and their sums are exact in int32 (|sum| <= 127 * 128 * 16384 < 2^31). Slow: the correctness baseline.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    std::vector<int8_t> q(K);
    for (int i = 0; i < M; ++i) {
        const float* x = X + (size_t)i * K;
        float amax = 0.0f;
        for (int k = 0; k < K; ++k) amax = std::fmax(amax, std::fabs(x[k]));
        const float s = amax / 127.0f;
        for (int k = 0; k < K; ++k)
            q[k] = s > 0.0f ? (int8_t)std::fmin(127.0f, std::fmax(-127.0f, std::nearbyint(x[k] / s))) : 0;
        for (int j = 0; j < N; ++j) {
            const int8_t* w = W + (size_t)j * K;
            int32_t acc = 0;
            for (int k = 0; k < K; ++k) acc += (int32_t)q[k] * (int32_t)w[k];
            Y[(size_t)i * N + j] = (s * sw[j]) * (float)acc;
        }
    }
}
