// Rung 1 -- one block per query row: scores in shared memory, then a weighted sum of V.
//
// Block (head, i) handles query row i of one head. Its warps take keys
// j = 0..i in turn (never a masked one): the 32 lanes of a warp read one row of
// K together (coalesced) and reduce the dot product with shuffles; the scores
// s_j = q.k_j / sqrt(D) go to shared memory. The block then takes their max,
// turns them into exp(s_j - max) and sums those, and finally thread c sums
// p_j * V[j][c] over the row's keys (a warp reads a row of V, coalesced) and
// divides by the sum. Simple and exact about the mask, but every query reads
// its keys and values again from L2: nothing is shared between rows.

#include <cuda_runtime.h>

#include <math.h>

constexpr int THREADS = 128;  // 4 warps; >= D, so one thread per output column
constexpr int WARPS = THREADS / 32;
constexpr int MAX_D = 128;

__device__ __forceinline__ float warp_sum(float x) {
    for (int off = 16; off > 0; off >>= 1) x += __shfl_xor_sync(0xffffffffu, x, off);
    return x;
}
__device__ __forceinline__ float warp_max(float x) {
    for (int off = 16; off > 0; off >>= 1) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
    return x;
}

// Block-wide reduction of one value per thread (max or sum); every thread gets the result.
template <bool MAX>
__device__ float block_reduce(float x, float* scratch) {
    x = MAX ? warp_max(x) : warp_sum(x);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();  // scratch may still be read from the previous reduction
    if (lane == 0) scratch[warp] = x;
    __syncthreads();
    float r = scratch[0];
    for (int w = 1; w < WARPS; ++w) r = MAX ? fmaxf(r, scratch[w]) : r + scratch[w];
    return r;
}

__global__ void __launch_bounds__(THREADS) causal_row(const float* __restrict__ Q, const float* __restrict__ K,
                                                      const float* __restrict__ V, float* __restrict__ O, int S,
                                                      int D, float scale) {
    extern __shared__ float scores[];  // S floats (only 0..i used)
    __shared__ float q[MAX_D];
    __shared__ float scratch[WARPS];

    const size_t row = blockIdx.x;          // (head, i) flattened: head * S + i
    const int i = (int)(row % S);
    const size_t head0 = (row - i) * D;     // offset of the head's first row
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;

    for (int c = tid; c < D; c += THREADS) q[c] = Q[row * D + c] * scale;
    __syncthreads();

    // ---- scores of keys 0..i, a warp per key ----
    for (int j = warp; j <= i; j += WARPS) {
        const float* k = K + head0 + (size_t)j * D;
        float dot = 0.0f;
        for (int c = lane; c < D; c += 32) dot = fmaf(q[c], k[c], dot);
        dot = warp_sum(dot);
        if (lane == 0) scores[j] = dot;
    }
    __syncthreads();

    // ---- softmax over the row: max, exponentials, sum ----
    float mx = -INFINITY;
    for (int j = tid; j <= i; j += THREADS) mx = fmaxf(mx, scores[j]);
    mx = block_reduce<true>(mx, scratch);
    float sum = 0.0f;
    for (int j = tid; j <= i; j += THREADS) {
        const float p = expf(scores[j] - mx);
        scores[j] = p;
        sum += p;
    }
    sum = block_reduce<false>(sum, scratch);  // its barriers also publish the p_j

    // ---- output column c: sum_j p_j V[j][c] ----
    for (int c = tid; c < D; c += THREADS) {
        const float* v = V + head0 + c;
        float acc = 0.0f;
        for (int j = 0; j <= i; ++j) acc = fmaf(scores[j], v[(size_t)j * D], acc);
        O[row * D + c] = acc / sum;
    }
}

void solve(const float* Q, const float* K, const float* V, float* output, int B, int H, int S, int D) {
    const size_t smem = (size_t)S * sizeof(float);
    cudaFuncSetAttribute(causal_row, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    const float scale = 1.0f / sqrtf((float)D);
    causal_row<<<(unsigned)((size_t)B * H * S), THREADS, smem>>>(Q, K, V, output, S, D, scale);
}
