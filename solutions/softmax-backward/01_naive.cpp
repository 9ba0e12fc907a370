// CPU rung 1 -- naive softmax backward: one row at a time, the dot product, then the write.
//
// dX = Y * (dY - sum_k Y_k dY_k). The dot product is a double: one float accumulator over a row of a
// million, with dY of mean 3, loses 3e-4 of it, and the difference dY - dot cancels that much more.
#include <cstddef>

void solve(const float* Y, const float* dY, float* dX, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* y = Y + (size_t)r * N;
        const float* g = dY + (size_t)r * N;
        double dot = 0.0;
        for (int j = 0; j < N; ++j) dot += (double)y[j] * g[j];
        const float d = (float)dot;
        float* out = dX + (size_t)r * N;
        for (int j = 0; j < N; ++j) out[j] = y[j] * (g[j] - d);
    }
}
