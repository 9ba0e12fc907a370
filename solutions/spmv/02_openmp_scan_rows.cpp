// CPU rung 2 -- row starts by a parallel two-pass scan, then rows shared out dynamically (OpenMP).
//
// Over rung 1: a row can only start once its start is known, so the starts come first: each thread sums
// the lengths of its own chunk of rows, the four chunk totals are scanned, and each thread writes the starts
// of its chunk from its carry (the prefix-sum problem's two-pass scan). Rows then go to the threads in
// small dynamic batches, so that threads given long rows do not hold up the rest.
#include <omp.h>

#include <cstddef>
#include <vector>

void solve(const int* row_lengths, const int* cols, const float* vals, const float* x, float* y, int M, int N, int L) {
    static std::vector<long long> starts;
    starts.resize(M);
    const int threads = omp_get_max_threads();
    std::vector<long long> carry(threads + 1, 0);
#pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num();
        const long long begin = (long long)M * t / threads, end = (long long)M * (t + 1) / threads;
        long long total = 0;
        for (long long i = begin; i < end; ++i) total += row_lengths[i];
        carry[t + 1] = total;
#pragma omp barrier
#pragma omp single
        for (int u = 0; u < threads; ++u) carry[u + 1] += carry[u];
        long long running = carry[t];
        for (long long i = begin; i < end; ++i) starts[i] = running, running += row_lengths[i];
#pragma omp barrier
#pragma omp for schedule(dynamic, 64)
        for (int i = 0; i < M; ++i) {
            const long long p = starts[i];
            float sum = 0.0f;
            for (int k = 0; k < row_lengths[i]; ++k) sum += vals[p + k] * x[cols[p + k]];
            y[i] = sum;
        }
    }
}
