// expect: wrong_answer
// message: large_scores
// Attention whose softmax skips the row maximum, one warp per query row in one pass: each key's score by a
// warp reduction, p = __expf(score) with no maximum subtracted, the sum and p * V accumulated as they come,
// divided at the end. Right with the usual inputs; on large_scores (scores past 88 in every row) __expf
// overflows to inf and the row's outputs are inf/inf = NaN.
#include <cuda_runtime.h>

constexpr int WARPS = 4;
constexpr int MAX_PER_LANE = 32;  // d <= 1024: at most 32 output columns per lane

__global__ void attention_no_max(const float* __restrict__ Q, const float* __restrict__ K,
                                 const float* __restrict__ V, float* __restrict__ O, int M, int N, int d,
                                 float scale) {
    const int lane = threadIdx.x % 32;
    const int row = blockIdx.x * WARPS + threadIdx.x / 32;
    if (row >= M) return;
    const float* q = Q + (size_t)row * d;
    float acc[MAX_PER_LANE] = {};
    float sum = 0.f;
    for (int j = 0; j < N; ++j) {
        const float* k = K + (size_t)j * d;
        float dot = 0.f;
        for (int c = lane; c < d; c += 32) dot += q[c] * k[c];
        for (int offset = 16; offset > 0; offset /= 2) dot += __shfl_xor_sync(0xffffffffu, dot, offset);
        const float p = __expf(dot * scale);  // no maximum subtracted
        sum += p;
        const float* v = V + (size_t)j * d;
#pragma unroll
        for (int t = 0; t < MAX_PER_LANE; ++t)
            if (lane + 32 * t < d) acc[t] += p * v[lane + 32 * t];
    }
    float* o = O + (size_t)row * d;
#pragma unroll
    for (int t = 0; t < MAX_PER_LANE; ++t)
        if (lane + 32 * t < d) o[lane + 32 * t] = acc[t] / sum;
}

extern "C" void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    attention_no_max<<<(M + WARPS - 1) / WARPS, 32 * WARPS>>>(Q, K, V, output, M, N, d, rsqrtf((float)d));
}
