// expect: accepted
// Honest but unusual (the CPU's "several kernels"): three separate OpenMP parallel passes over the whole
// matrix (row maxima, row sums into a malloc'd array, normalisation), each a fork/join of its own.
#include <omp.h>

#include <cmath>
#include <vector>
void solve(const float* input, float* output, int M, int N) {
    std::vector<float> maxima(M);
    std::vector<double> sums(M);
    #pragma omp parallel for schedule(static)
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        maxima[r] = m;
    }
    #pragma omp parallel for schedule(static)
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - maxima[r]);
        sums[r] = s;
    }
    #pragma omp parallel for schedule(static)
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - maxima[r]) / sums[r]);
    }
}
