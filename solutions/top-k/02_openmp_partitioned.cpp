// CPU rung 2 -- rows shared out by OpenMP; a long row split into parts whose top K are merged.
//
// Over rung 1: rows go to the threads in parallel. When there are fewer rows than threads, each row is cut
// into one part per thread: each part's top K is found by insertion, as in rung 1 (columns in order, so ties
// stay with the smaller column), and the parts' candidates are merged by sorting them on (value descending,
// column ascending) and keeping the first K.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace {

struct Entry {
    float value;
    int column;
};

bool before(const Entry& a, const Entry& b) { return a.value > b.value || (a.value == b.value && a.column < b.column); }

// The top K of row[begin, end) by insertion, appended to `out` in order.
void top_k_part(const float* row, int begin, int end, int K, std::vector<Entry>& out) {
    std::vector<Entry> best;
    best.reserve(K);
    for (int j = begin; j < end; ++j) {
        const float v = row[j];
        if ((int)best.size() == K && !(v > best.back().value)) continue;
        if ((int)best.size() < K) best.push_back({v, j});
        int p = (int)best.size() - 1;
        for (; p > 0 && best[p - 1].value < v; --p) best[p] = best[p - 1];
        best[p] = {v, j};
    }
    out.insert(out.end(), best.begin(), best.end());
}

void write(const std::vector<Entry>& best, int K, float* values, int* indices) {
    for (int r = 0; r < K; ++r) values[r] = best[r].value, indices[r] = best[r].column;
}

}  // namespace

void solve(const float* x, float* values, int* indices, int M, int N, int K) {
    const int threads = omp_get_max_threads();
    if (M >= threads) {
#pragma omp parallel for schedule(dynamic, 16)
        for (int i = 0; i < M; ++i) {
            std::vector<Entry> best;
            top_k_part(x + (size_t)i * N, 0, N, K, best);
            write(best, K, values + (size_t)i * K, indices + (size_t)i * K);
        }
        return;
    }
    for (int i = 0; i < M; ++i) {
        const float* row = x + (size_t)i * N;
        std::vector<std::vector<Entry>> parts(threads);
#pragma omp parallel for schedule(static, 1)
        for (int t = 0; t < threads; ++t)
            top_k_part(row, (int)((long long)N * t / threads), (int)((long long)N * (t + 1) / threads), K, parts[t]);
        std::vector<Entry> all;
        for (const auto& part : parts) all.insert(all.end(), part.begin(), part.end());
        std::partial_sort(all.begin(), all.begin() + K, all.end(), before);
        write(all, K, values + (size_t)i * K, indices + (size_t)i * K);
    }
}
