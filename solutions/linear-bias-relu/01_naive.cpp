// CPU rung 1 -- naive linear layer, single thread.
//
// For each output Y[i][j]: the dot product of row i of X and row j of W (both
// contiguous, W being N x K), plus b[j], clamped at zero. Every row of W is
// re-read from memory for each row of X, and nothing runs in parallel. It is
// the correctness baseline.

#include <algorithm>
#include <cstddef>

void solve(const float* X, const float* W, const float* b, float* Y, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k) acc += X[(size_t)i * K + k] * W[(size_t)j * K + k];
            Y[(size_t)i * N + j] = std::max(acc + b[j], 0.0f);
        }
}
