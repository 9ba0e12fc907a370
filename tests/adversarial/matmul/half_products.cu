// expect: wrong_answer
// message: elements wrong
// Cheat (7): half-precision products: A and B rounded to FP16 (11-bit mantissas) and multiplied in half
// precision, accumulated in FP32; off by ~1e-3 relative per product.
#include <cuda_fp16.h>
__global__ void half_gemm(const float* A, const float* B, float* C, int M, int N, int K) {
    const size_t total = (size_t)M * N;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < total; i += (size_t)gridDim.x * blockDim.x) {
        const int m = (int)(i / N), n = (int)(i % N);
        float s = 0.0f;
        for (int k = 0; k < K; ++k)
            s += __half2float(__hmul(__float2half(A[(size_t)m * K + k]), __float2half(B[(size_t)k * N + n])));
        C[i] = s;
    }
}
void solve(const float* A, const float* B, float* C, int M, int N, int K) { half_gemm<<<8192, 256>>>(A, B, C, M, N, K); }
