// CPU rung 1 -- naive: std::stable_sort of the positions by their keys.
//
// The correctness baseline: sort the positions 0..N-1 with a comparison that looks at their keys; a stable
// sort keeps equal keys in position order, which is exactly the required permutation. O(N log N)
// comparisons, each a random access into the keys.
#include <algorithm>
#include <numeric>

void solve(const int* keys, int* sorted_keys, int* indices, int N) {
    std::iota(indices, indices + N, 0);
    std::stable_sort(indices, indices + N, [keys](int a, int b) { return keys[a] < keys[b]; });
    for (int i = 0; i < N; ++i) sorted_keys[i] = keys[indices[i]];
}
