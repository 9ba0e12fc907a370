// Rung 2 -- shared-memory tiling.
//
// Over rung 1: a 32x32 thread block cooperatively stages a 32x32 tile of A
// and a 32x32 tile of B in shared memory, then every thread reads the 32
// values it needs for its dot product from shared memory. Each global value
// is now loaded once per block instead of once per thread, cutting global
// traffic by the tile size (32x). Loads outside the matrix are zero-filled,
// so any M, N, K works. The inner loop is now bound by shared-memory
// bandwidth (two shared loads per multiply-add), which rung 3 attacks.

#include <cuda_runtime.h>

constexpr int TILE = 32;  // block is TILE x TILE threads, one output each

__global__ void matmul_smem_tiled(const float* __restrict__ A, const float* __restrict__ B,
                                  float* __restrict__ C, int M, int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;  // output row of this thread
    const int col = blockIdx.x * TILE + tx;  // output column of this thread

    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        // Each thread loads one element of each tile; zero outside the matrix.
        int ak = k0 + tx;  // column of A this thread loads
        int bk = k0 + ty;  // row of B this thread loads
        As[ty][tx] = (row < M && ak < K) ? A[(size_t)row * K + ak] : 0.0f;
        Bs[ty][tx] = (bk < K && col < N) ? B[(size_t)bk * N + col] : 0.0f;
        __syncthreads();

        // As[ty][k] is a broadcast within a warp, Bs[k][tx] is conflict-free.
#pragma unroll
        for (int k = 0; k < TILE; ++k)
            acc += As[ty][k] * Bs[k][tx];
        __syncthreads();  // tiles are overwritten in the next iteration
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_smem_tiled<<<grid, block>>>(A, B, C, M, N, K);
}
