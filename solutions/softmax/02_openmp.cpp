// CPU rung 2 -- OpenMP softmax with a one-pass online max/sum.
//
// Over rung 1: the max and the sum of exponentials come from a single read
// of the row: a running (max, sum) pair rescales its sum by exp(old - new)
// whenever the max grows, and two pairs merge the same way. That saves one
// sweep over memory. Rows are split across threads; when there are fewer
// rows than threads (e.g. one row of 1e6), each row is split into chunks
// instead, and the per-thread pairs are merged before the write pass.

#include <omp.h>

#include <cmath>
#include <cstddef>

constexpr int LANES = 16;  // independent (max, sum) accumulators per chunk

struct MaxSum {
    float max;
    float sum;  // sum of exp(x - max) over the elements seen
};

static inline void online_update(MaxSum& a, float x) {
    if (x > a.max) {
        a.sum = a.sum * std::exp(a.max - x) + 1.0f;
        a.max = x;
    } else {
        a.sum += std::exp(x - a.max);
    }
}

static inline MaxSum merge(MaxSum a, MaxSum b) {
    if (a.sum == 0.0f) return b;  // empty partial
    if (b.sum == 0.0f) return a;
    const float m = std::fmax(a.max, b.max);
    return {m, a.sum * std::exp(a.max - m) + b.sum * std::exp(b.max - m)};
}

// Online (max, sum) of x[0..n). LANES interleaved accumulators shorten the
// dependency chain and keep each partial sum short (better rounding).
static MaxSum row_max_sum(const float* x, size_t n) {
    MaxSum lane[LANES];
    for (MaxSum& a : lane) a = {-INFINITY, 0.0f};
    size_t i = 0;
    for (; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; ++l) online_update(lane[l], x[i + l]);
    for (; i < n; ++i) online_update(lane[i % LANES], x[i]);
    MaxSum total = lane[0];
    for (int l = 1; l < LANES; ++l) total = merge(total, lane[l]);
    return total;
}

static void write_normalised(const float* x, float* y, size_t n, MaxSum ms) {
    for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i] - ms.max) / ms.sum;
}

void solve(const float* input, float* output, int M, int N) {
    if (M >= omp_get_max_threads()) {
        #pragma omp parallel for schedule(static)
        for (int r = 0; r < M; ++r) {
            const float* x = input + (size_t)r * N;
            write_normalised(x, output + (size_t)r * N, N, row_max_sum(x, N));
        }
        return;
    }

    // Few long rows: split each row into one contiguous chunk per thread.
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        MaxSum row = {-INFINITY, 0.0f};
        #pragma omp parallel
        {
            const size_t t = omp_get_thread_num(), nt = omp_get_num_threads();
            const size_t lo = N * t / nt, hi = N * (t + 1) / nt;
            const MaxSum part = row_max_sum(x + lo, hi - lo);
            #pragma omp critical
            row = merge(row, part);
            #pragma omp barrier
            write_normalised(x + lo, y + lo, hi - lo, row);
        }
    }
}
