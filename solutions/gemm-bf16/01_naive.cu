// Rung 1 -- naive: one thread per element of C, a float32 dot product over k on the FMA units, rounded once to
// bfloat16.
//
// Each bfloat16 is widened with __bfloat162float (exact) and multiplied in float32, so products are exact and
// sums are float32, as the problem's accumulation says; __float2bfloat16_rn rounds the sum to nearest even. A
// warp's 32 threads read 32 neighbouring columns of B (coalesced) and one element of A (a broadcast), but
// nothing is reused from shared memory and the tensor cores sit idle: the baseline the tensor-core rung is
// measured against.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

__global__ void gemm_naive(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                           __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const __nv_bfloat16* a = A + (size_t)i * K;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum = fmaf(__bfloat162float(a[k]), __bfloat162float(B[(size_t)k * N + j]), sum);
    C[(size_t)i * N + j] = __float2bfloat16_rn(sum);
}

void solve(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M, int N, int K) {
    const dim3 threads(32, 8);
    const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    gemm_naive<<<blocks, threads>>>(A, B, C, M, N, K);
}
