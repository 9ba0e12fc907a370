// CPU rung 1 -- naive matmul, single thread.
//
// The textbook i-j-k triple loop: each C[i][j] is the dot product of row i
// of A and column j of B, accumulated in float. The k loop walks B down a
// column (stride N), so almost every B load misses the cache for large N,
// and nothing runs in parallel. It is the correctness baseline.

#include <cstddef>

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
            C[(size_t)i * N + j] = acc;
        }
}
