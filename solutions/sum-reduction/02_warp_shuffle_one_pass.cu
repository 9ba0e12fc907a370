// Rung 2 — grid-stride float4 loads, warp-shuffle reductions, one launch with a last-block finish.
//
// Over rung 1:
//  * The grid is as large as the GPU holds at once (resident blocks), not N / 512 blocks. Each thread walks
//    the input with a grid stride, UNROLL independent float4 loads per step into UNROLL accumulators: many
//    bytes in flight per thread, one 16-byte load instruction per four values, and the adds overlap the loads.
//  * Partial sums are combined with __shfl_down_sync inside each warp (registers, no shared memory, no
//    barrier), then the block's warp sums once through shared memory: two barriers per block in all.
//  * One launch: each block writes its sum to a scratch slot, __threadfence() makes it visible, and an
//    atomicInc on a counter tells the last block to finish, which adds the slots in a fixed order (the result
//    does not depend on block scheduling) and resets the counter for the next call.
// Accuracy: each thread adds a few hundred values per accumulator, then the tree: error ~ eps * log N.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int THREADS = 512;
constexpr int WARPS = THREADS / 32;
constexpr int UNROLL = 4;
constexpr int MAX_BLOCKS = 4096;

__device__ float g_block_sums[MAX_BLOCKS];
__device__ unsigned int g_blocks_done = 0;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// The block's sum, valid in thread 0.
__device__ __forceinline__ float block_sum(float v) {
    __shared__ float warp_sums[WARPS];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = warp_sum(v);
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    v = threadIdx.x < WARPS ? warp_sums[threadIdx.x] : 0.f;
    if (warp == 0) v = warp_sum(v);
    __syncthreads();  // warp_sums may be reused by a second call
    return v;
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS) reduce_sum(const float* __restrict__ in, float* __restrict__ out, int N) {
    const long long stride = (long long)gridDim.x * THREADS;
    const long long start = (long long)blockIdx.x * THREADS + threadIdx.x;
    float acc[UNROLL] = {};
    long long tail_start = 0;
    if (VEC) {
        const float4* in4 = reinterpret_cast<const float4*>(in);
        const long long n4 = N / 4;
        long long i = start;
        for (; i + (UNROLL - 1) * stride < n4; i += UNROLL * stride) {
            float4 q[UNROLL];
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) q[u] = __ldcs(in4 + i + u * stride);
#pragma unroll
            for (int u = 0; u < UNROLL; ++u) acc[u] += (q[u].x + q[u].y) + (q[u].z + q[u].w);
        }
        for (; i < n4; i += stride) {
            const float4 q = __ldcs(in4 + i);
            acc[0] += (q.x + q.y) + (q.z + q.w);
        }
        tail_start = n4 * 4;
    }
    for (long long i = tail_start + start; i < N; i += stride) acc[1] += in[i];  // scalar: the tail, or everything

    float v = 0.f;
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v += acc[u];
    v = block_sum(v);

    __shared__ bool last;
    if (threadIdx.x == 0) {
        g_block_sums[blockIdx.x] = v;
        __threadfence();  // the sum is visible to every block before the counter says it is there
        last = atomicInc(&g_blocks_done, gridDim.x - 1) == gridDim.x - 1;  // wraps to 0: ready for the next call
    }
    __syncthreads();
    if (!last) return;
    __threadfence();
    float s = 0.f;
    for (int b = threadIdx.x; b < gridDim.x; b += THREADS) s += __ldcg(&g_block_sums[b]);  // L2, not a stale L1
    s = block_sum(s);
    if (threadIdx.x == 0) *out = s;
}

static int resident_blocks() {
    int device = 0, sms = 0, per_sm = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_sum<true>, THREADS, 0);
    const int blocks = sms * (per_sm > 0 ? per_sm : 1);
    return blocks < MAX_BLOCKS ? blocks : MAX_BLOCKS;
}

extern "C" void solve(const float* input, float* output, int N) {
    static const int max_blocks = resident_blocks();
    const long long wanted = ((long long)N + 4LL * THREADS - 1) / (4LL * THREADS);  // at least 4 values per thread
    const int blocks = (int)(wanted < max_blocks ? wanted : max_blocks);
    if (reinterpret_cast<uintptr_t>(input) % 16 == 0) reduce_sum<true><<<blocks, THREADS>>>(input, output, N);
    else reduce_sum<false><<<blocks, THREADS>>>(input, output, N);
}
