// CPU rung 2 -- blocked transpose, OpenMP over blocks.
//
// Over rung 1: the matrix is walked in 32x32 blocks, so the 32 output lines a block writes (and the 32
// input lines it reads) all stay in L1 while the block is done: every cache line fetched is used whole.
// Blocks are independent: OpenMP hands out block rows to the cores.
#include <algorithm>
#include <cstddef>

constexpr int B = 32;

void solve(const float* input, float* output, int M, int N) {
    const int row_blocks = (M + B - 1) / B;
    #pragma omp parallel for schedule(static) if ((long long)M * N >= 65536)
    for (int bi = 0; bi < row_blocks; ++bi) {
        const int i0 = bi * B, i1 = std::min(M, i0 + B);
        for (int j0 = 0; j0 < N; j0 += B) {
            const int j1 = std::min(N, j0 + B);
            for (int j = j0; j < j1; ++j)
                for (int i = i0; i < i1; ++i) output[(size_t)j * M + i] = input[(size_t)i * N + j];
        }
    }
}
