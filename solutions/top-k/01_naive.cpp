// CPU rung 1 -- naive: per row, insertion into the sorted list of the best K so far (the output row itself).
//
// The row is scanned in column order; a value enters the list only if the list is not full or it beats the
// K-th, and then moves up past every entry it beats. A later column never beats an equal value, which is the
// tie rule. With random values only about K ln(N/K) of the N values enter.
#include <cstddef>

void solve(const float* x, float* values, int* indices, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        const float* row = x + (size_t)i * N;
        float* best = values + (size_t)i * K;
        int* where = indices + (size_t)i * K;
        int size = 0;
        for (int j = 0; j < N; ++j) {
            const float v = row[j];
            if (size == K && !(v > best[K - 1])) continue;
            int p = size < K ? size++ : K - 1;  // the slot that opens (a full list drops its last)
            for (; p > 0 && best[p - 1] < v; --p) best[p] = best[p - 1], where[p] = where[p - 1];
            best[p] = v, where[p] = j;
        }
    }
}
