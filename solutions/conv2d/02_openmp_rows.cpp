// CPU rung 2 -- direct convolution by whole output rows: SIMD along q, OpenMP.
//
// Over rung 1: the loops are turned so the innermost one runs along an output
// row: for each (c, r, s), out[n][k][p][0..Q) += w[k][c][r][s] * in[n][c][p+r][s..s+Q).
// That is a scaled vector add over contiguous memory, which the compiler turns
// into SIMD FMAs with the weight in a register. A block of FILTERS filters is
// computed together, so each input row loaded from cache feeds FILTERS vector
// FMAs, and the FILTERS output rows being summed (a few KB) stay in L1. Threads
// share out (image, filter block, output row) tasks, which own their outputs.

#include <algorithm>
#include <cstddef>

constexpr int FILTERS = 8;  // filters per task: reuse of each input row

void solve(const float* __restrict__ input, const float* __restrict__ weight, float* __restrict__ output,
           int N, int C, int H, int W, int K, int R, int S) {
    const int P = H - R + 1, Q = W - S + 1;
    const int k_blocks = (K + FILTERS - 1) / FILTERS;

    #pragma omp parallel for collapse(3) schedule(dynamic)
    for (int n = 0; n < N; ++n)
        for (int kb = 0; kb < k_blocks; ++kb)
            for (int p = 0; p < P; ++p) {
                const int k0 = kb * FILTERS, filters = std::min(FILTERS, K - k0);
                float* out[FILTERS];
                for (int f = 0; f < filters; ++f) {
                    out[f] = output + (((size_t)n * K + k0 + f) * P + p) * Q;
                    std::fill(out[f], out[f] + Q, 0.0f);
                }
                for (int c = 0; c < C; ++c)
                    for (int r = 0; r < R; ++r) {
                        const float* in_row = input + (((size_t)n * C + c) * H + p + r) * W;
                        for (int s = 0; s < S; ++s) {
                            const float* in = in_row + s;
                            for (int f = 0; f < filters; ++f) {
                                const float w = weight[(((size_t)(k0 + f) * C + c) * R + r) * S + s];
                                float* o = out[f];
                                #pragma omp simd
                                for (int q = 0; q < Q; ++q) o[q] += w * in[q];
                            }
                        }
                    }
            }
}
