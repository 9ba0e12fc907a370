// CPU rung 2 -- OpenMP layer norm: rows across cores, vectorised passes.
//
// Over rung 1: rows are shared among the threads (a row of a million is split into chunks instead, when
// there are fewer rows than threads), and each pass is written so the compiler vectorises it: the sums
// run in 8 independent float lanes over blocks of 1024 values, whose block sums go into a double (float
// partial sums stay short, so the result keeps tree-like accuracy at SIMD speed).
#include <omp.h>

#include <cmath>
#include <cstddef>

constexpr float EPS = 1e-5f;
constexpr int BLOCK = 1024;

// sum of (x[i] - shift)^SQUARE over x[0..n)
template <bool SQUARE>
static double blocked_sum(const float* x, long long n, float shift) {
    double total = 0.0;
    for (long long b = 0; b < n; b += BLOCK) {
        const long long e = b + BLOCK < n ? b + BLOCK : n;
        float lane[8] = {};
        long long i = b;
        for (; i + 8 <= e; i += 8)
            #pragma omp simd
            for (int l = 0; l < 8; ++l) {
                const float d = x[i + l] - shift;
                lane[l] += SQUARE ? d * d : d;
            }
        for (; i < e; ++i) {
            const float d = x[i] - shift;
            lane[0] += SQUARE ? d * d : d;
        }
        total += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    }
    return total;
}

static void write_row(const float* x, const float* gamma, const float* beta, float* y, long long lo, long long hi,
                      float mean, float rstd) {
    #pragma omp simd
    for (long long j = lo; j < hi; ++j) y[j] = (x[j] - mean) * rstd * gamma[j] + beta[j];
}

void solve(const float* input, const float* gamma, const float* beta, float* output, int M, int N) {
    if (M >= omp_get_max_threads() || (long long)M * N < 65536) {
        #pragma omp parallel for schedule(static) if ((long long)M * N >= 65536)
        for (int r = 0; r < M; ++r) {
            const float* x = input + (size_t)r * N;
            const float mean = (float)(blocked_sum<false>(x, N, 0.f) / N);
            const float var = (float)(blocked_sum<true>(x, N, mean) / N);
            write_row(x, gamma, beta, output + (size_t)r * N, 0, N, mean, 1.0f / std::sqrt(var + EPS));
        }
        return;
    }
    // Few long rows: every thread takes a chunk of the row.
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        double sum = 0.0, squares = 0.0;
        float mean = 0.f;
        #pragma omp parallel
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const long long lo = (long long)N * t / nt, hi = (long long)N * (t + 1) / nt;
            const double part = blocked_sum<false>(x + lo, hi - lo, 0.f);
            #pragma omp atomic
            sum += part;
            #pragma omp barrier
            #pragma omp single
            mean = (float)(sum / N);
            const double part_sq = blocked_sum<true>(x + lo, hi - lo, mean);
            #pragma omp atomic
            squares += part_sq;
            #pragma omp barrier
            write_row(x, gamma, beta, output + (size_t)r * N, lo, hi, mean, 1.0f / std::sqrt((float)(squares / N) + EPS));
        }
    }
}
