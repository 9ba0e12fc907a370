// CPU rung 2 -- i-k-j order, cache blocking, OpenMP.
//
// Over rung 1: the loops run i-k-j, so the inner loop is C[i][j] += a * B[k][j]
// over contiguous j, which the compiler turns into SIMD FMAs. K and N are
// blocked so a K_BLOCK x N_BLOCK panel of B stays in L2 while all the rows
// of a row block reuse it, and each row's N_BLOCK slice of C stays in L1.
// Threads share out (row block, column block) tiles of C, which they own
// outright, so no synchronisation is needed and even one row can be split.

#include <algorithm>
#include <cstddef>

constexpr int ROW_BLOCK = 32;  // rows of C per tile (reuse of the B panel)
constexpr int K_BLOCK = 128;   // depth of the B panel
constexpr int N_BLOCK = 512;   // width of the B panel and C tile; the panel is 256 KB, fits L2

void solve(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
           int M, int N, int K) {
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK;
    const int col_blocks = (N + N_BLOCK - 1) / N_BLOCK;

    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i0 = rb * ROW_BLOCK, i1 = std::min(M, i0 + ROW_BLOCK);
            const int j0 = cb * N_BLOCK, j1 = std::min(N, j0 + N_BLOCK);

            for (int i = i0; i < i1; ++i)
                std::fill(C + (size_t)i * N + j0, C + (size_t)i * N + j1, 0.0f);

            for (int k0 = 0; k0 < K; k0 += K_BLOCK) {
                const int k1 = std::min(K, k0 + K_BLOCK);
                for (int i = i0; i < i1; ++i) {
                    float* c = C + (size_t)i * N;
                    for (int k = k0; k < k1; ++k) {
                        const float a = A[(size_t)i * K + k];
                        const float* b = B + (size_t)k * N;
                        for (int j = j0; j < j1; ++j) c[j] += a * b[j];
                    }
                }
            }
        }
}
