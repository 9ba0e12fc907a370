// expect: accepted
// Honest but unusual: its result depends on summation order. Each row's sum is split into chunks that
// threads add into a shared total in whatever order they finish (an atomic float add), starting at a
// position that changes from call to call, so two calls on the same input need not agree bit for bit.
#include <atomic>
#include <cmath>
#include <vector>
void solve(const float* input, float* output, int M, int N) {
    static unsigned call = 0;
    const unsigned shift = (++call * 2654435761u) % (unsigned)N;
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        std::atomic<float> total{0.0f};
        const int chunk = 4096;
        #pragma omp parallel for schedule(dynamic) if (N > 4 * chunk)
        for (int c = 0; c < N; c += chunk) {
            float part = 0;
            for (int k = c; k < c + chunk && k < N; ++k) part += std::exp(x[(k + shift) % N] - m);
            float seen = total.load();
            while (!total.compare_exchange_weak(seen, seen + part)) {}
        }
        const float s = total.load();
        for (int i = 0; i < N; ++i) y[i] = std::exp(x[i] - m) / s;
    }
}
