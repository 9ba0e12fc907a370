// Rung 1 -- naive: a kernel quantizes each row of X into a scratch int8 matrix, then one thread per element of Y
// sums int32 products over k on the integer units.
//
// quantize_rows: a block per row finds max|x| (a tree in shared memory), s = max / 127 and q = rint(x / s), with
// IEEE division (nvcc's default -prec-div=true; no --use_fast_math) and rint's half-to-even rounding, exactly as
// the statement defines them. gemm_naive: thread (i, j) reads row i of q and row j of W (both K-contiguous) and
// writes (s_i * sw_j) * acc. Nothing is staged in shared memory and the tensor cores sit idle: the baseline.
#include <cstdint>
#include <cuda_runtime.h>

constexpr int QUANT_THREADS = 256;

__global__ void quantize_rows(const float* __restrict__ X, int8_t* __restrict__ q, float* __restrict__ s, int K) {
    __shared__ float partial[QUANT_THREADS];
    const float* x = X + (size_t)blockIdx.x * K;
    float amax = 0.0f;
    for (int k = threadIdx.x; k < K; k += blockDim.x) amax = fmaxf(amax, fabsf(x[k]));
    partial[threadIdx.x] = amax;
    __syncthreads();
    for (int width = blockDim.x / 2; width > 0; width /= 2) {
        if (threadIdx.x < width) partial[threadIdx.x] = fmaxf(partial[threadIdx.x], partial[threadIdx.x + width]);
        __syncthreads();
    }
    const float scale = partial[0] / 127.0f;
    int8_t* row = q + (size_t)blockIdx.x * K;
    for (int k = threadIdx.x; k < K; k += blockDim.x)
        row[k] = scale > 0.0f ? (int8_t)fminf(127.0f, fmaxf(-127.0f, rintf(x[k] / scale))) : 0;
    if (threadIdx.x == 0) s[blockIdx.x] = scale;
}

__global__ void gemm_naive(const int8_t* __restrict__ q, const float* __restrict__ s, const int8_t* __restrict__ W,
                           const float* __restrict__ sw, float* __restrict__ Y, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= M || j >= N) return;
    const int8_t* a = q + (size_t)i * K;
    const int8_t* b = W + (size_t)j * K;
    int acc = 0;
    for (int k = 0; k < K; ++k) acc += (int)a[k] * (int)b[k];
    Y[(size_t)i * N + j] = (s[i] * sw[j]) * (float)acc;
}

// Scratch for q and s, kept between calls and grown when a call needs more.
static int8_t* scratch_q(size_t bytes, float** s, int rows) {
    static int8_t* q = nullptr;
    static float* scales = nullptr;
    static size_t q_bytes = 0;
    static int scale_rows = 0;
    if (bytes > q_bytes) cudaFree(q), cudaMalloc(&q, bytes), q_bytes = bytes;
    if (rows > scale_rows) cudaFree(scales), cudaMalloc(&scales, rows * sizeof(float)), scale_rows = rows;
    *s = scales;
    return q;
}

void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    float* s = nullptr;
    int8_t* q = scratch_q((size_t)M * K, &s, M);
    quantize_rows<<<M, QUANT_THREADS>>>(X, q, s, K);
    const dim3 threads(32, 8);
    const dim3 blocks((N + threads.x - 1) / threads.x, (M + threads.y - 1) / threads.y);
    gemm_naive<<<blocks, threads>>>(q, s, W, sw, Y, M, N, K);
}
