// expect: accepted
// Honest but unusual (the CPU's "__expf and fma"): its own vectorisable exp, a Cody-Waite range reduction
// and a degree-6 polynomial evaluated with fused multiply-adds (std::fmaf), about 2 ulp; float sums.
#include <cmath>
#include <cstdint>
#include <cstring>
static inline float fast_exp(float x) {  // x <= 0
    if (x < -104.0f) return 0.0f;
    const float n = std::nearbyint(x * 1.44269504f);
    float r = std::fmaf(n, -0.693145752f, x);
    r = std::fmaf(n, -1.42860677e-6f, r);
    float p = 1.0f / 720.0f;
    p = std::fmaf(p, r, 1.0f / 120.0f);
    p = std::fmaf(p, r, 1.0f / 24.0f);
    p = std::fmaf(p, r, 1.0f / 6.0f);
    p = std::fmaf(p, r, 0.5f);
    p = std::fmaf(p, r, 1.0f);
    p = std::fmaf(p, r, 1.0f);
    return std::ldexp(p, (int)n);
}
void solve(const float* input, float* output, int M, int N) {
    #pragma omp parallel for schedule(static)
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        float s = 0, c = 0;  // Kahan-compensated float sum (the sum's error must not grow with N)
        for (int i = 0; i < N; ++i) {
            y[i] = fast_exp(x[i] - m);
            float t = s + (y[i] - c);
            c = (t - s) - (y[i] - c);
            s = t;
        }
        const float inv = 1.0f / s;
        for (int i = 0; i < N; ++i) y[i] *= inv;
    }
}
