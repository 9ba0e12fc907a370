// CPU rung 2 -- one pass per row (online log-sum-exp), rows shared out by OpenMP.
//
// Over rung 1: each row is read once. Eight running (max, sum) pairs walk the row in lanes of eight, so the
// compiler vectorises the loop, and they merge at the end: (m1, s1) + (m2, s2) = (m, s1 e^(m1-m) + s2 e^(m2-m)).
// A running sum is rescaled only when its maximum grows. Rows go to threads; a row of a million classes is
// split into chunks whose pairs merge the same way.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace {

constexpr int LANES = 8;
constexpr int CHUNK = 1 << 16;  // classes per task on very long rows

struct Pair {
    float m = -std::numeric_limits<float>::infinity(), s = 0.0f;
};

Pair merge(Pair a, Pair b) {
    if (a.m == -std::numeric_limits<float>::infinity()) return b;
    if (b.m == -std::numeric_limits<float>::infinity()) return a;
    const float m = std::max(a.m, b.m);
    return {m, a.s * std::exp(a.m - m) + b.s * std::exp(b.m - m)};
}

Pair scan(const float* x, int n) {
    float m[LANES], s[LANES];
    for (int l = 0; l < LANES; ++l) m[l] = -std::numeric_limits<float>::infinity(), s[l] = 0.0f;
    int j = 0;
    for (; j + LANES <= n; j += LANES)
        for (int l = 0; l < LANES; ++l) {
            const float v = x[j + l];
            if (v > m[l]) s[l] = s[l] * std::exp(m[l] - v), m[l] = v;  // exp(-inf) = 0 on the first
            s[l] += std::exp(v - m[l]);
        }
    Pair total;
    for (int l = 0; l < LANES; ++l) total = merge(total, {m[l], s[l]});
    for (; j < n; ++j) total = merge(total, {x[j], 1.0f});
    return total;
}

}  // namespace

void solve(const float* logits, const int* labels, float* loss, int M, int C) {
    if (M >= 4 || C <= CHUNK) {
        #pragma omp parallel for schedule(static)
        for (int i = 0; i < M; ++i) {
            const float* x = logits + (size_t)i * C;
            const Pair p = scan(x, C);
            loss[i] = (p.m - x[labels[i]]) + std::log(p.s);
        }
        return;
    }
    for (int i = 0; i < M; ++i) {  // few long rows: split each across the threads
        const float* x = logits + (size_t)i * C;
        const int chunks = (C + CHUNK - 1) / CHUNK;
        Pair total;
        #pragma omp parallel
        {
            Pair mine;
            #pragma omp for schedule(static) nowait
            for (int c = 0; c < chunks; ++c) mine = merge(mine, scan(x + (size_t)c * CHUNK, std::min(CHUNK, C - c * CHUNK)));
            #pragma omp critical
            total = merge(total, mine);
        }
        loss[i] = (total.m - x[labels[i]]) + std::log(total.s);
    }
}
