// Rung 2 — one warp per row, reductions with warp shuffles.
//
// Over rung 1: the 32 lanes of a warp share a row and read consecutive addresses,
// so every load and store is coalesced, and the row max / row sum are combined
// with __shfl_xor_sync (no shared memory, no __syncthreads). Rows of up to 1024
// floats are read once into registers (COLS values per lane, COLS a compile-time
// constant so the array really stays in registers) and the three passes then run
// on registers: the row crosses DRAM once in, once out. Longer rows fall back to
// three coalesced passes over global memory.
#include <cuda_runtime.h>
#include <math.h>

constexpr int WARP = 32;
constexpr int WARPS_PER_BLOCK = 4;  // 4 rows per 128-thread block
constexpr int THREADS = WARP * WARPS_PER_BLOCK;
constexpr int MAX_COLS = 32;        // register-resident rows: N <= WARP * MAX_COLS = 1024

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Row held in registers: lane l keeps columns l, l+32, ..., l+32*(COLS-1).
template <int COLS>
__global__ void __launch_bounds__(THREADS) softmax_warp_regs(const float* __restrict__ in, float* __restrict__ out,
                                                             int M, int N) {
    const int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (row >= M) return;  // row is uniform across the warp: whole warps leave together
    const float* x = in + (size_t)row * N;
    float* y = out + (size_t)row * N;

    float v[COLS];
    float row_max = -INFINITY;
#pragma unroll
    for (int i = 0; i < COLS; ++i) {
        const int c = i * WARP + lane;
        v[i] = c < N ? x[c] : -INFINITY;
        row_max = fmaxf(row_max, v[i]);
    }
    row_max = warp_max(row_max);  // finite: N >= 1

    float sum = 0.f;
#pragma unroll
    for (int i = 0; i < COLS; ++i) {
        v[i] = __expf(v[i] - row_max);  // padding slots: exp(-inf) = 0
        sum += v[i];
    }
    const float inv_sum = 1.f / warp_sum(sum);

#pragma unroll
    for (int i = 0; i < COLS; ++i) {
        const int c = i * WARP + lane;
        if (c < N) y[c] = v[i] * inv_sum;
    }
}

// Rows longer than 1024: three coalesced passes over global memory.
__global__ void __launch_bounds__(THREADS) softmax_warp_loop(const float* __restrict__ in, float* __restrict__ out,
                                                             int M, int N) {
    const int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / WARP;
    const int lane = threadIdx.x % WARP;
    if (row >= M) return;
    const float* x = in + (size_t)row * N;
    float* y = out + (size_t)row * N;

    float row_max = -INFINITY;
    for (int c = lane; c < N; c += WARP) row_max = fmaxf(row_max, x[c]);
    row_max = warp_max(row_max);

    float sum = 0.f;
    for (int c = lane; c < N; c += WARP) sum += __expf(x[c] - row_max);
    const float inv_sum = 1.f / warp_sum(sum);

    for (int c = lane; c < N; c += WARP) y[c] = __expf(x[c] - row_max) * inv_sum;
}

template <int COLS>
static void launch_regs(const float* in, float* out, int M, int N, int blocks) {
    softmax_warp_regs<COLS><<<blocks, THREADS>>>(in, out, M, N);
}

extern "C" void solve(const float* input, float* output, int M, int N) {
    const int blocks = (M + WARPS_PER_BLOCK - 1) / WARPS_PER_BLOCK;
    if (N <= WARP * 1)             launch_regs<1>(input, output, M, N, blocks);
    else if (N <= WARP * 2)        launch_regs<2>(input, output, M, N, blocks);
    else if (N <= WARP * 4)        launch_regs<4>(input, output, M, N, blocks);
    else if (N <= WARP * 8)        launch_regs<8>(input, output, M, N, blocks);
    else if (N <= WARP * 16)       launch_regs<16>(input, output, M, N, blocks);
    else if (N <= WARP * MAX_COLS) launch_regs<MAX_COLS>(input, output, M, N, blocks);
    else softmax_warp_loop<<<blocks, THREADS>>>(input, output, M, N);
}
