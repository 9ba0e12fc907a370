// expect: wrong_answer
// message: elements wrong
// Cheat (7): TF32 tensor cores (wmma, 10-bit mantissas) where FP32 accuracy is asked for: about 8 times the
// FP32 rate on Hopper, and products off by ~1e-3 relative. One warp per 16x16 tile of C, A and B staged
// through shared memory with zero padding at the edges.
#include <mma.h>
using namespace nvcuda;
__global__ void tf32_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
    __shared__ __align__(32) float a_tile[16 * 8];
    __shared__ __align__(32) float b_tile[8 * 16];
    __shared__ __align__(32) float c_tile[16 * 16];
    const int tm = blockIdx.y * 16, tn = blockIdx.x * 16;
    wmma::fragment<wmma::accumulator, 16, 16, 8, float> acc;
    wmma::fill_fragment(acc, 0.0f);
    for (int k0 = 0; k0 < K; k0 += 8) {
        for (int i = threadIdx.x; i < 128; i += 32) {
            const int ar = i / 8, ac = i % 8, br = i / 16, bc = i % 16;
            a_tile[i] = (tm + ar < M && k0 + ac < K) ? A[(size_t)(tm + ar) * K + k0 + ac] : 0.0f;
            b_tile[i] = (k0 + br < K && tn + bc < N) ? B[(size_t)(k0 + br) * N + tn + bc] : 0.0f;
        }
        __syncwarp();
        wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> b;
        wmma::load_matrix_sync(a, a_tile, 8);
        wmma::load_matrix_sync(b, b_tile, 16);
        for (int t = 0; t < a.num_elements; ++t) a.x[t] = wmma::__float_to_tf32(a.x[t]);
        for (int t = 0; t < b.num_elements; ++t) b.x[t] = wmma::__float_to_tf32(b.x[t]);
        wmma::mma_sync(acc, a, b, acc);
        __syncwarp();
    }
    wmma::store_matrix_sync(c_tile, acc, 16, wmma::mem_row_major);
    __syncwarp();
    for (int i = threadIdx.x; i < 256; i += 32) {
        const int r = i / 16, c = i % 16;
        if (tm + r < M && tn + c < N) C[(size_t)(tm + r) * N + tn + c] = c_tile[i];
    }
}
void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 grid((N + 15) / 16, (M + 15) / 16);
    tf32_gemm<<<grid, 32>>>(A, B, C, M, N, K);
}
