// Rung 1 -- naive: one thread per row, one float32 running sum.
//
// The baseline: neighbouring threads read addresses N floats apart (nothing coalesces) and a matrix with few
// rows leaves almost every thread idle. The next rung gives each row a warp.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void rows_naive(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ y, int M,
                           int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const float* row = x + (size_t)i * N;
    float sum = 0.0f;
    for (int j = 0; j < N; ++j) sum += row[j] * w[j];
    y[i] = sum;
}

void solve(const float* x, const float* w, float* y, int M, int N) {
    rows_naive<<<(M + THREADS - 1) / THREADS, THREADS>>>(x, w, y, M, N);
}
