// Rung 1 -- naive: one thread per element of Y, two float32 dot products over k on the FMA units, then
// silu(g) * u.
//
// Each half is widened with __half2float (exact) and multiplied in float32, so products are exact and sums
// are float32, as the problem's accumulation says. The 32 threads of a warp take 32 neighbouring units j, so
// they read 32 different weight rows, K halves apart (uncoalesced), and nothing is reused from shared memory:
// the baseline the tensor-core rung is measured against.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

__global__ void swiglu_naive(const __half* __restrict__ X, const __half* __restrict__ W_gate,
                             const __half* __restrict__ W_up, float* __restrict__ Y, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const __half* x = X + (size_t)i * K;
    const __half* wg = W_gate + (size_t)j * K;
    const __half* wu = W_up + (size_t)j * K;
    float g = 0.0f, u = 0.0f;
    for (int k = 0; k < K; ++k) {
        const float xk = __half2float(x[k]);
        g = fmaf(xk, __half2float(wg[k]), g);
        u = fmaf(xk, __half2float(wu[k]), u);
    }
    Y[(size_t)i * N + j] = g / (1.0f + expf(-g)) * u;
}

void solve(const __half* X, const __half* W_gate, const __half* W_up, float* Y, int M, int N, int K) {
    const dim3 threads(32, 8);
    const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    swiglu_naive<<<blocks, threads>>>(X, W_gate, W_up, Y, M, N, K);
}
