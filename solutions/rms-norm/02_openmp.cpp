// CPU rung 2 -- OpenMP RMS norm: rows across cores, vectorised passes.
//
// Over rung 1: rows are shared among the threads (a row of a million is split into chunks instead, when
// there are fewer rows than threads), and the sum of squares runs in 8 independent float lanes over blocks
// of 1024 values, whose block sums go into a double: SIMD speed, tree-like accuracy.
#include <omp.h>

#include <cmath>
#include <cstddef>

constexpr float EPS = 1e-6f;
constexpr int BLOCK = 1024;

static double sum_squares(const float* x, long long n) {
    double total = 0.0;
    for (long long b = 0; b < n; b += BLOCK) {
        const long long e = b + BLOCK < n ? b + BLOCK : n;
        float lane[8] = {};
        long long i = b;
        for (; i + 8 <= e; i += 8)
            #pragma omp simd
            for (int l = 0; l < 8; ++l) lane[l] += x[i + l] * x[i + l];
        for (; i < e; ++i) lane[0] += x[i] * x[i];
        total += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    }
    return total;
}

static void write_row(const float* x, const float* weight, float* y, long long lo, long long hi, float scale) {
    #pragma omp simd
    for (long long j = lo; j < hi; ++j) y[j] = x[j] * scale * weight[j];
}

void solve(const float* input, const float* weight, float* output, int M, int N) {
    if (M >= omp_get_max_threads() || (long long)M * N < 65536) {
        #pragma omp parallel for schedule(static) if ((long long)M * N >= 65536)
        for (int r = 0; r < M; ++r) {
            const float* x = input + (size_t)r * N;
            const float scale = 1.0f / std::sqrt((float)(sum_squares(x, N) / N) + EPS);
            write_row(x, weight, output + (size_t)r * N, 0, N, scale);
        }
        return;
    }
    // Few long rows: every thread takes a chunk of the row.
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        double squares = 0.0;
        #pragma omp parallel
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const long long lo = (long long)N * t / nt, hi = (long long)N * (t + 1) / nt;
            const double part = sum_squares(x + lo, hi - lo);
            #pragma omp atomic
            squares += part;
            #pragma omp barrier
            write_row(x, weight, output + (size_t)r * N, lo, hi, 1.0f / std::sqrt((float)(squares / N) + EPS));
        }
    }
}
