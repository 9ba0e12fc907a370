// CPU rung 1 -- naive: clear the counts, then one increment per value, in order.
//
// The correctness baseline: the counts must be cleared first (they hold garbage when solve is called), and
// each value adds one to its bin. One thread, one pass over the values.
#include <cstring>

void solve(const int* values, int* counts, int N, int BINS) {
    std::memset(counts, 0, sizeof(int) * (size_t)BINS);
    for (int i = 0; i < N; ++i) ++counts[values[i]];
}
