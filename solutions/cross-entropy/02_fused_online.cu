// Rung 2 -- fused, one pass: the online log-sum-exp, a warp per short row or a block per long one.
//
// Each thread keeps a running pair (m, s): the largest logit it has seen and the sum of e^(x - m), rescaled by
// e^(m - m') when the maximum grows to m'. Pairs merge the same way, (m1, s1) + (m2, s2) =
// (m, s1 e^(m1 - m) + s2 e^(m2 - m)), first across a warp with shuffles, then across the block's warps through
// shared memory, so a row is read from memory exactly once, in coalesced float4 loads when C is a multiple of 4
// (rows are then 16-byte aligned). Rows of up to 1024 classes get a warp each (8 rows per block); longer rows a
// block of 512 threads each. One thread then adds the label's logit: loss = (m - x[label]) + log s.
#include <cuda_runtime.h>
#include <math.h>

namespace {

constexpr int WARP_ROW_MAX = 1024;  // rows up to this long: a warp per row
constexpr int ROWS_PER_BLOCK = 8;   // warps per block on the warp-per-row path
constexpr int BLOCK_THREADS = 512;  // threads per row on the block-per-row path

struct Pair {
    float m, s;
};

__device__ __forceinline__ Pair merge(Pair a, Pair b) {
    if (a.m == -INFINITY) return b;
    if (b.m == -INFINITY) return a;
    const float m = fmaxf(a.m, b.m);
    return {m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
}

__device__ __forceinline__ void add(Pair& p, float x) {
    if (x > p.m) {
        p.s = p.s * __expf(p.m - x) + 1.0f;  // __expf(-inf) = 0 on the first element
        p.m = x;
    } else {
        p.s += __expf(x - p.m);
    }
}

__device__ __forceinline__ Pair warp_merge(Pair p) {
    for (int offset = 16; offset > 0; offset /= 2) {
        Pair other{__shfl_xor_sync(0xffffffffu, p.m, offset), __shfl_xor_sync(0xffffffffu, p.s, offset)};
        p = merge(p, other);
    }
    return p;
}

// This thread's pair over x[first], x[first + stride], ... (float4 steps when the row is 16-byte aligned).
template <bool VEC>
__device__ __forceinline__ Pair scan(const float* __restrict__ x, int C, int first, int stride) {
    Pair p{-INFINITY, 0.0f};
    if constexpr (VEC) {
        const float4* x4 = reinterpret_cast<const float4*>(x);
        for (int j = first; j < C / 4; j += stride) {
            const float4 v = __ldg(x4 + j);
            add(p, v.x), add(p, v.y), add(p, v.z), add(p, v.w);
        }
    } else {
        for (int j = first; j < C; j += stride) add(p, __ldg(x + j));
    }
    return p;
}

template <bool VEC>
__global__ void __launch_bounds__(32 * ROWS_PER_BLOCK) warp_per_row(const float* __restrict__ logits,
                                                                    const int* __restrict__ labels,
                                                                    float* __restrict__ loss, int M, int C) {
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= M) return;  // whole warps leave together
    const float* x = logits + (size_t)row * C;
    const Pair p = warp_merge(scan<VEC>(x, C, lane, 32));
    if (lane == 0) loss[row] = (p.m - x[labels[row]]) + logf(p.s);
}

template <bool VEC>
__global__ void __launch_bounds__(BLOCK_THREADS) block_per_row(const float* __restrict__ logits,
                                                               const int* __restrict__ labels,
                                                               float* __restrict__ loss, int C) {
    __shared__ Pair partial[BLOCK_THREADS / 32];
    const int row = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const float* x = logits + (size_t)row * C;
    Pair p = warp_merge(scan<VEC>(x, C, threadIdx.x, BLOCK_THREADS));
    if (lane == 0) partial[warp] = p;
    __syncthreads();
    if (warp == 0) {
        p = lane < BLOCK_THREADS / 32 ? partial[lane] : Pair{-INFINITY, 0.0f};
        p = warp_merge(p);
        if (lane == 0) loss[row] = (p.m - x[labels[row]]) + logf(p.s);
    }
}

}  // namespace

void solve(const float* logits, const int* labels, float* loss, int M, int C) {
    const bool vec = C % 4 == 0;
    if (C <= WARP_ROW_MAX) {
        const int blocks = (M + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK;
        if (vec)
            warp_per_row<true><<<blocks, 32 * ROWS_PER_BLOCK>>>(logits, labels, loss, M, C);
        else
            warp_per_row<false><<<blocks, 32 * ROWS_PER_BLOCK>>>(logits, labels, loss, M, C);
    } else if (vec) {
        block_per_row<true><<<M, BLOCK_THREADS>>>(logits, labels, loss, C);
    } else {
        block_per_row<false><<<M, BLOCK_THREADS>>>(logits, labels, loss, C);
    }
}
