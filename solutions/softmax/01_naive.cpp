// CPU rung 1 -- naive row softmax, single thread.
//
// For each row: one pass finds the row max, a second sums exp(x - max), a
// third writes exp(x - max) / sum. Subtracting the max keeps every exp() in
// (0, 1], so inputs of +-1e4 cannot overflow. Three sweeps over the row and
// no parallelism: the correctness baseline for the OpenMP rung.

#include <algorithm>
#include <cmath>
#include <cstddef>

void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;

        float row_max = x[0];
        for (int j = 1; j < N; ++j) row_max = std::max(row_max, x[j]);

        float sum = 0.0f;
        for (int j = 0; j < N; ++j) sum += std::exp(x[j] - row_max);

        for (int j = 0; j < N; ++j) y[j] = std::exp(x[j] - row_max) / sum;
    }
}
