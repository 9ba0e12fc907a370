// CPU rung 1 -- naive: one row at a time, one float32 running sum per row.
//
// The correctness baseline. Faster rungs add OpenMP across rows (#pragma omp parallel for) and several
// independent partial sums per row, which the compiler vectorises.
#include <cstddef>

void solve(const float* x, const float* w, float* y, int M, int N) {
    for (int i = 0; i < M; ++i) {
        const float* row = x + (size_t)i * N;
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) sum += row[j] * w[j];
        y[i] = sum;
    }
}
