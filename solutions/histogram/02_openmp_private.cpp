// CPU rung 2 -- one private histogram per thread, merged at the end (OpenMP).
//
// Over rung 1: the values are split among the threads, and each counts its share into its own array, so no
// two threads write the same counter while counting (no atomics, no false sharing). The private arrays are
// then summed bin by bin, the bins split among the threads. With more bins than values per thread the
// private arrays cost more to clear and merge than the counting itself: there the threads increment the
// shared counts with atomics instead.
#include <omp.h>

#include <cstring>
#include <vector>

void solve(const int* values, int* counts, int N, int BINS) {
    const int threads = omp_get_max_threads();
    if ((long long)BINS * 4 > N) {  // few values per bin: private copies would cost more than they save
        std::memset(counts, 0, sizeof(int) * (size_t)BINS);
#pragma omp parallel for schedule(static)
        for (int i = 0; i < N; ++i) {
#pragma omp atomic
            ++counts[values[i]];
        }
        return;
    }
    static std::vector<int> priv;
    priv.assign((size_t)threads * BINS, 0);
#pragma omp parallel num_threads(threads)
    {
        int* mine = priv.data() + (size_t)omp_get_thread_num() * BINS;
#pragma omp for schedule(static)
        for (int i = 0; i < N; ++i) ++mine[values[i]];
#pragma omp for schedule(static)
        for (int b = 0; b < BINS; ++b) {
            int total = 0;
            for (int t = 0; t < threads; ++t) total += priv[(size_t)t * BINS + b];
            counts[b] = total;
        }
    }
}
