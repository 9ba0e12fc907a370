// CPU rung 1 -- naive direct convolution, single thread.
//
// Seven nested loops, straight from the definition: for every image n, filter
// k and output pixel (p, q), the sum over channels c and kernel offsets (r, s)
// of input[n][c][p+r][q+s] * weight[k][c][r][s]. Each input pixel is read again
// for every filter and every kernel offset, and nothing runs in parallel. It is
// the correctness baseline.

#include <cstddef>

void solve(const float* input, const float* weight, float* output, int N, int C, int H, int W, int K, int R,
           int S) {
    const int P = H - R + 1, Q = W - S + 1;
    for (int n = 0; n < N; ++n)
        for (int k = 0; k < K; ++k)
            for (int p = 0; p < P; ++p)
                for (int q = 0; q < Q; ++q) {
                    float acc = 0.0f;
                    for (int c = 0; c < C; ++c)
                        for (int r = 0; r < R; ++r)
                            for (int s = 0; s < S; ++s)
                                acc += input[(((size_t)n * C + c) * H + p + r) * W + q + s] *
                                       weight[(((size_t)k * C + c) * R + r) * S + s];
                    output[(((size_t)n * K + k) * P + p) * Q + q] = acc;
                }
}
