// CPU rung 1 -- naive RMS norm, one thread, two passes per row.
//
// For each row: the sum of squares (in double: a float accumulator over a row of a million loses 1e-4 of
// the sum), then x / sqrt(mean + eps) * weight.
#include <cmath>
#include <cstddef>

constexpr float EPS = 1e-6f;

void solve(const float* input, const float* weight, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        double squares = 0.0;
        for (int j = 0; j < N; ++j) squares += (double)x[j] * x[j];
        const float scale = 1.0f / std::sqrt((float)(squares / N) + EPS);
        for (int j = 0; j < N; ++j) y[j] = x[j] * scale * weight[j];
    }
}
