// CPU rung 2 -- OpenMP rotary embeddings: each token's cosines and sines once, shared by all its heads.
//
// Over rung 1: the D/2 frequencies are computed once per call, and a token's D/2 cosines and sines (angles in
// double, as rung 1) once per token, then applied to its H query heads and HK key heads; the heads' loops
// vectorise. Tokens are shared among the threads.
#include <cmath>
#include <cstddef>
#include <vector>

static void rotate_token(const float* x, float* out, int heads, int half, const float* c, const float* s) {
    for (int h = 0; h < heads; ++h) {
        const float* x1 = x + (size_t)h * 2 * half;
        const float* x2 = x1 + half;
        float* o1 = out + (size_t)h * 2 * half;
        float* o2 = o1 + half;
        #pragma omp simd
        for (int i = 0; i < half; ++i) {
            o1[i] = x1[i] * c[i] - x2[i] * s[i];
            o2[i] = x2[i] * c[i] + x1[i] * s[i];
        }
    }
}

void solve(const float* Q, const float* K, const int* pos, float* Q_out, float* K_out, int T, int H, int HK, int D) {
    const int half = D / 2;
    std::vector<double> theta(half);
    for (int i = 0; i < half; ++i) theta[i] = std::pow(10000.0, -2.0 * i / D);
    #pragma omp parallel
    {
        std::vector<float> c(half), s(half);
        #pragma omp for schedule(static)
        for (int t = 0; t < T; ++t) {
            for (int i = 0; i < half; ++i) {
                const double a = pos[t] * theta[i];
                c[i] = (float)std::cos(a);
                s[i] = (float)std::sin(a);
            }
            rotate_token(Q + (size_t)t * H * D, Q_out + (size_t)t * H * D, H, half, c.data(), s.data());
            rotate_token(K + (size_t)t * HK * D, K_out + (size_t)t * HK * D, HK, half, c.data(), s.data());
        }
    }
}
