// CPU rung 2 -- OpenMP softmax backward: rows across the 4 threads, vectorised dot products.
//
// Over rung 1: rows are shared among the threads (a single long row is split into chunks instead), and the
// dot product runs in 8 independent float lanes over blocks of 1024 values whose block sums go into a
// double, so the compiler vectorises it and the sum keeps tree-like accuracy.
#include <omp.h>

#include <cstddef>

constexpr int BLOCK = 1024;

static double blocked_dot(const float* y, const float* g, long long n) {
    double total = 0.0;
    for (long long b = 0; b < n; b += BLOCK) {
        const long long e = b + BLOCK < n ? b + BLOCK : n;
        float lane[8] = {};
        long long i = b;
        for (; i + 8 <= e; i += 8)
            #pragma omp simd
            for (int l = 0; l < 8; ++l) lane[l] += y[i + l] * g[i + l];
        for (; i < e; ++i) lane[0] += y[i] * g[i];
        total += ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
    }
    return total;
}

static void write_row(const float* y, const float* g, float* out, long long lo, long long hi, float dot) {
    #pragma omp simd
    for (long long j = lo; j < hi; ++j) out[j] = y[j] * (g[j] - dot);
}

void solve(const float* Y, const float* dY, float* dX, int M, int N) {
    if (M >= omp_get_max_threads() || (long long)M * N < 65536) {
        #pragma omp parallel for schedule(static) if ((long long)M * N >= 65536)
        for (int r = 0; r < M; ++r) {
            const size_t at = (size_t)r * N;
            write_row(Y + at, dY + at, dX + at, 0, N, (float)blocked_dot(Y + at, dY + at, N));
        }
        return;
    }
    for (int r = 0; r < M; ++r) {  // few long rows: every thread takes a chunk of the row
        const size_t at = (size_t)r * N;
        double dot = 0.0;
        #pragma omp parallel
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const long long lo = (long long)N * t / nt, hi = (long long)N * (t + 1) / nt;
            const double part = blocked_dot(Y + at + lo, dY + at + lo, hi - lo);
            #pragma omp atomic
            dot += part;
            #pragma omp barrier
            write_row(Y + at, dY + at, dX + at, lo, hi, (float)dot);
        }
    }
}
