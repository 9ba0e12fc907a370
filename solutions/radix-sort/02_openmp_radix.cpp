// CPU rung 2 -- LSD radix sort, four passes over 8-bit digits, each pass split among the threads (OpenMP).
//
// Over rung 1: no comparisons. A pass looks at one byte of every key, lowest byte first: each thread counts
// the digits of its own contiguous chunk of keys, the counts are scanned digit-major, thread-minor (digit 0
// of thread 0, digit 0 of thread 1, ..., digit 1 of thread 0, ...), which gives each thread the first slot
// of each of its digits, and the threads then move their keys (and positions) to those slots in order.
// Every pass is stable, so after the fourth (keys are below 2^31: their top byte is at most 127) the order
// is sorted with ties in position order.
#include <omp.h>

#include <cstring>
#include <vector>

namespace {
constexpr int RADIX = 256;
}

void solve(const int* keys, int* sorted_keys, int* indices, int N) {
    static std::vector<int> tmp_keys, tmp_indices;
    tmp_keys.resize(N), tmp_indices.resize(N);
    const int threads = omp_get_max_threads();
    std::vector<long long> counts((size_t)threads * RADIX);
    // Pass p reads (src_keys, src_indices) and writes (dst_keys, dst_indices); passes alternate between the
    // outputs and the scratch arrays so that the fourth writes the outputs. The first reads the input keys
    // and positions 0..N-1.
    const int* src_keys = keys;
    const int* src_indices = nullptr;
    for (int pass = 0; pass < 4; ++pass) {
        const int shift = 8 * pass;
        int* dst_keys = pass % 2 == 0 ? tmp_keys.data() : sorted_keys;
        int* dst_indices = pass % 2 == 0 ? tmp_indices.data() : indices;
        std::fill(counts.begin(), counts.end(), 0);
#pragma omp parallel num_threads(threads)
        {
            const int t = omp_get_thread_num();
            const long long begin = (long long)N * t / threads, end = (long long)N * (t + 1) / threads;
            long long* mine = counts.data() + (size_t)t * RADIX;
            for (long long i = begin; i < end; ++i) ++mine[(src_keys[i] >> shift) & 0xFF];
#pragma omp barrier
#pragma omp single
            {
                long long offset = 0;
                for (int d = 0; d < RADIX; ++d)
                    for (int u = 0; u < threads; ++u) {
                        const long long c = counts[(size_t)u * RADIX + d];
                        counts[(size_t)u * RADIX + d] = offset;
                        offset += c;
                    }
            }
            for (long long i = begin; i < end; ++i) {
                const long long slot = mine[(src_keys[i] >> shift) & 0xFF]++;
                dst_keys[slot] = src_keys[i];
                dst_indices[slot] = src_indices ? src_indices[i] : (int)i;
            }
        }
        src_keys = dst_keys, src_indices = dst_indices;
    }
}
