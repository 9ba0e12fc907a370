// CPU rung 1 -- naive fused matmul + softmax, single thread.
//
// Row by row: each output element is the i-j-k dot product of row i of A
// and column j of B (strided down B, cache-unfriendly), accumulated in
// float; then the finished row is softmaxed in place (subtract the row max,
// exponentiate, divide by the sum). The correctness baseline.

#include <algorithm>
#include <cmath>
#include <cstddef>

void solve(const float* A, const float* B, float* output, int M, int N, int K) {
    for (int i = 0; i < M; ++i) {
        float* y = output + (size_t)i * N;
        for (int j = 0; j < N; ++j) {
            float acc = 0.0f;
            for (int k = 0; k < K; ++k)
                acc += A[(size_t)i * K + k] * B[(size_t)k * N + j];
            y[j] = acc;
        }

        float row_max = y[0];
        for (int j = 1; j < N; ++j) row_max = std::max(row_max, y[j]);
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) {
            y[j] = std::exp(y[j] - row_max);
            sum += y[j];
        }
        for (int j = 0; j < N; ++j) y[j] /= sum;
    }
}
