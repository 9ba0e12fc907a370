// Rung 1 -- naive: one thread per element of C, a float32 dot product over k on the FMA units, scaled and rounded
// once to bfloat16.
//
// Each e4m3 value is widened with cuda_fp8.h's conversion to float (exact); products of two e4m3 values are
// exact in float32 and the sums are float32, as the problem's accumulation says. B is N x K, so thread (i, j)
// reads row i of A and row j of B, both contiguous in k (a warp's 32 threads read 32 rows of B: uncoalesced).
// Nothing is reused from shared memory and the tensor cores sit idle: the baseline.
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

__global__ void gemm_naive(const __nv_fp8_e4m3* __restrict__ A, const __nv_fp8_e4m3* __restrict__ B,
                           const float* __restrict__ scale_a, const float* __restrict__ scale_b,
                           __nv_bfloat16* __restrict__ C, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const __nv_fp8_e4m3* a = A + (size_t)i * K;
    const __nv_fp8_e4m3* b = B + (size_t)j * K;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum = fmaf(float(a[k]), float(b[k]), sum);
    C[(size_t)i * N + j] = __float2bfloat16_rn((scale_a[0] * scale_b[0]) * sum);
}

void solve(const __nv_fp8_e4m3* A, const __nv_fp8_e4m3* B, const float* scale_a, const float* scale_b, __nv_bfloat16* C,
           int M, int N, int K) {
    const dim3 threads(32, 8);
    const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    gemm_naive<<<blocks, threads>>>(A, B, scale_a, scale_b, C, M, N, K);
}
