// Rung 3 — one block per row, block reduction, float4 loads.
//
// Over rung 2: a long row is shared by a whole 256-thread block instead of one
// warp, so a single row keeps 8 warps of loads in flight and an M=1 matrix is no
// longer served by 32 threads. Max and sum are reduced with warp shuffles, then
// across the block's warps through a small shared-memory array. When N % 4 == 0
// and both pointers are 16-byte aligned every row starts 16-byte aligned, so the
// row is read and written as float4 (one 128-bit instruction per 4 values);
// otherwise it uses scalar accesses. The row is still read three times.
#include <cuda_runtime.h>
#include <stdint.h>
#include <math.h>

constexpr int WARP = 32;
constexpr int THREADS = 256;
constexpr int WARPS = THREADS / WARP;

__device__ __forceinline__ float warp_max(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));
    return v;
}

__device__ __forceinline__ float warp_sum(float v) {
    for (int offset = WARP / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
    return v;
}

// Every thread of the block calls these; all get the block-wide result.
// `scratch` holds WARPS + 1 floats. The trailing __syncthreads makes back-to-back calls safe.
__device__ float block_max(float v, float* scratch) {
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    v = warp_max(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_max(lane < WARPS ? scratch[lane] : -INFINITY);
        if (lane == 0) scratch[WARPS] = v;
    }
    __syncthreads();
    return scratch[WARPS];
}

__device__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < WARPS ? scratch[lane] : 0.f);
        if (lane == 0) scratch[WARPS] = v;
    }
    __syncthreads();
    return scratch[WARPS];
}

__device__ __forceinline__ float max4(float4 q) { return fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)); }

__device__ __forceinline__ float sum_exp4(float4 q, float m) {
    return __expf(q.x - m) + __expf(q.y - m) + __expf(q.z - m) + __expf(q.w - m);
}

// VEC: the row is read as N/4 float4 (requires N % 4 == 0 and 16-byte aligned pointers).
template <bool VEC>
__global__ void __launch_bounds__(THREADS) softmax_block(const float* __restrict__ in, float* __restrict__ out, int N) {
    __shared__ float scratch[WARPS + 1];
    const size_t offset = (size_t)blockIdx.x * N;
    const float* x = in + offset;
    float* y = out + offset;
    const int t = threadIdx.x;

    float m = -INFINITY;
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int c = t; c < N / 4; c += THREADS) m = fmaxf(m, max4(x4[c]));
    } else {
        for (int c = t; c < N; c += THREADS) m = fmaxf(m, x[c]);
    }
    const float row_max = block_max(m, scratch);

    float s = 0.f;
    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int c = t; c < N / 4; c += THREADS) s += sum_exp4(x4[c], row_max);
    } else {
        for (int c = t; c < N; c += THREADS) s += __expf(x[c] - row_max);
    }
    const float inv_sum = 1.f / block_sum(s, scratch);

    if (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        float4* y4 = reinterpret_cast<float4*>(y);
        for (int c = t; c < N / 4; c += THREADS) {
            const float4 q = x4[c];
            y4[c] = make_float4(__expf(q.x - row_max) * inv_sum, __expf(q.y - row_max) * inv_sum,
                                __expf(q.z - row_max) * inv_sum, __expf(q.w - row_max) * inv_sum);
        }
    } else {
        for (int c = t; c < N; c += THREADS) y[c] = __expf(x[c] - row_max) * inv_sum;
    }
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, float* output, int M, int N) {
    const bool vec = N % 4 == 0 && aligned16(input) && aligned16(output);
    if (vec) softmax_block<true><<<M, THREADS>>>(input, output, N);
    else     softmax_block<false><<<M, THREADS>>>(input, output, N);
}
