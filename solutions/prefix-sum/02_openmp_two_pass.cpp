// CPU rung 2 -- OpenMP scan in two passes: per-thread totals, then per-thread scans from their carries.
//
// Over rung 1: the input is cut into one contiguous chunk per thread. Pass 1: every thread sums its chunk
// (independent work, vectorised). Then one thread turns the chunk totals into carries (an exclusive scan of
// a handful of numbers). Pass 2: every thread scans its own chunk starting from its carry. The input is read
// twice and the output written once; both passes run on all cores. Sums are kept in double, as in rung 1.
#include <omp.h>

#include <vector>

void solve(const float* input, float* output, int N) {
    const int threads = N >= 65536 ? omp_get_max_threads() : 1;
    std::vector<double> carry(threads + 1, 0.0);
    #pragma omp parallel num_threads(threads)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const long long lo = (long long)N * t / nt, hi = (long long)N * (t + 1) / nt;
        double total = 0.0;
        #pragma omp simd reduction(+ : total)
        for (long long i = lo; i < hi; ++i) total += input[i];
        carry[t + 1] = total;
        #pragma omp barrier
        #pragma omp single
        for (int k = 1; k <= nt; ++k) carry[k] += carry[k - 1];
        double sum = carry[t];
        for (long long i = lo; i < hi; ++i) {
            sum += input[i];
            output[i] = (float)sum;
        }
    }
}
