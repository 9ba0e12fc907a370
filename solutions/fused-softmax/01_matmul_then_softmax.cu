// Rung 1 — matmul, then softmax: two kernels, logits round-trip through memory.
//
// Kernel 1 is the classic shared-memory tiled matmul: a 16x16 block stages a 16x16
// tile of A and of B in shared memory per step of K, so every value loaded from
// global memory is reused 16 times, and each thread accumulates one output in FP32.
// It writes the M x N logits into the output buffer. Kernel 2 then runs a plain
// row softmax in place (one block per row; max, sum of exp(x - max), normalise).
// Baseline for the fused rung: the logits cross DRAM three extra times (written,
// read for the stats, read again to normalise) and the matmul reuses data only 16x.
#include <cuda_runtime.h>
#include <math.h>

constexpr int TILE = 16;
constexpr int WARP = 32;
constexpr int SOFTMAX_THREADS = 256;
constexpr int SOFTMAX_WARPS = SOFTMAX_THREADS / WARP;

__global__ void matmul_tiled(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M,
                             int N, int K) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;
    const int col = blockIdx.x * TILE + tx;

    float acc = 0.f;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        As[ty][tx] = (row < M && k0 + tx < K) ? A[(size_t)row * K + k0 + tx] : 0.f;
        Bs[ty][tx] = (k0 + ty < K && col < N) ? B[(size_t)(k0 + ty) * N + col] : 0.f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// `scratch` holds SOFTMAX_WARPS + 1 floats; the trailing barrier makes back-to-back calls safe.
__device__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    v = warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_max(lane < SOFTMAX_WARPS ? scratch[lane] : -INFINITY);
        if (lane == 0) scratch[SOFTMAX_WARPS] = v;
    }
    __syncthreads();
    return scratch[SOFTMAX_WARPS];
}

__device__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < SOFTMAX_WARPS ? scratch[lane] : 0.f);
        if (lane == 0) scratch[SOFTMAX_WARPS] = v;
    }
    __syncthreads();
    return scratch[SOFTMAX_WARPS];
}

// In place: each element is read and then written by the same thread.
__global__ void __launch_bounds__(SOFTMAX_THREADS) softmax_rows_inplace(float* data, int N) {
    __shared__ float scratch[SOFTMAX_WARPS + 1];
    float* x = data + (size_t)blockIdx.x * N;

    float m = -INFINITY;
    for (int c = threadIdx.x; c < N; c += SOFTMAX_THREADS) m = fmaxf(m, x[c]);
    const float row_max = block_max(m, scratch);

    float s = 0.f;
    for (int c = threadIdx.x; c < N; c += SOFTMAX_THREADS) s += __expf(x[c] - row_max);
    const float inv_sum = 1.f / block_sum(s, scratch);

    for (int c = threadIdx.x; c < N; c += SOFTMAX_THREADS) x[c] = __expf(x[c] - row_max) * inv_sum;
}

extern "C" void solve(const float* A, const float* B, float* output, int M, int N, int K) {
    const dim3 block(TILE, TILE);
    const dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled<<<grid, block>>>(A, B, output, M, N, K);
    softmax_rows_inplace<<<M, SOFTMAX_THREADS>>>(output, N);
}
