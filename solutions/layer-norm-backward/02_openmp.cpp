// CPU rung 2 -- OpenMP layer norm backward: rows split among the threads, each with its own column sums.
//
// Over rung 1: each thread takes a contiguous range of rows, computes their dX with vectorised passes (float
// lanes over the row, their sums kept in doubles as in rung 1), and adds dY * xhat and dY into its own double
// column sums; the threads' sums are then added column by column, in thread order, so the result does not
// depend on timing.
#include <omp.h>

#include <cmath>
#include <cstddef>
#include <vector>

constexpr float EPS = 1e-5f;

void solve(const float* input, const float* gamma, const float* dY, float* dX, float* dgamma, float* dbeta, int M,
           int N) {
    const int threads = omp_get_max_threads();
    std::vector<double> sums((size_t)threads * 2 * N, 0.0);  // per thread: dgamma's N, then dbeta's N
    #pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        double* sum_gamma = sums.data() + (size_t)t * 2 * N;
        double* sum_beta = sum_gamma + N;
        std::vector<float> xhat(N);
        const long long lo = (long long)M * t / nt, hi = (long long)M * (t + 1) / nt;
        for (long long r = lo; r < hi; ++r) {
            const float* x = input + (size_t)r * N;
            const float* dy = dY + (size_t)r * N;
            double sum = 0.0;
            #pragma omp simd reduction(+ : sum)
            for (int j = 0; j < N; ++j) sum += x[j];
            const float mean = (float)(sum / N);
            double squares = 0.0;
            #pragma omp simd reduction(+ : squares)
            for (int j = 0; j < N; ++j) squares += (double)(x[j] - mean) * (x[j] - mean);
            const float rstd = 1.0f / std::sqrt((float)(squares / N) + EPS);
            double sum_g = 0.0, sum_gx = 0.0;
            #pragma omp simd reduction(+ : sum_g, sum_gx)
            for (int j = 0; j < N; ++j) {
                xhat[j] = (x[j] - mean) * rstd;
                const float g = gamma[j] * dy[j];
                sum_g += g;
                sum_gx += (double)g * xhat[j];
            }
            const float mean_g = (float)(sum_g / N), mean_gx = (float)(sum_gx / N);
            float* out = dX + (size_t)r * N;
            #pragma omp simd
            for (int j = 0; j < N; ++j) {
                out[j] = rstd * (gamma[j] * dy[j] - mean_g - xhat[j] * mean_gx);
                sum_gamma[j] += (double)dy[j] * xhat[j];
                sum_beta[j] += dy[j];
            }
        }
    }
    #pragma omp parallel for schedule(static)
    for (int j = 0; j < N; ++j) {
        double g = 0.0, b = 0.0;
        for (int t = 0; t < threads; ++t) {
            g += sums[(size_t)t * 2 * N + j];
            b += sums[(size_t)t * 2 * N + N + j];
        }
        dgamma[j] = (float)g;
        dbeta[j] = (float)b;
    }
}
