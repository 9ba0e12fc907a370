// CPU rung 1 -- naive: walk the rows in order, each starting where the previous one ended.
//
// The row starts (CSR's row_ptr) are a running sum of the row lengths, kept as the loop goes; each row's
// products go into one float running sum. One thread.
#include <cstddef>

void solve(const int* row_lengths, const int* cols, const float* vals, const float* x, float* y, int M, int N, int L) {
    size_t p = 0;
    for (int i = 0; i < M; ++i) {
        float sum = 0.0f;
        for (int k = 0; k < row_lengths[i]; ++k, ++p) sum += vals[p] * x[cols[p]];
        y[i] = sum;
    }
}
