// Rung 1 — naive RMS norm: one thread per row, two passes over the row.
//
// Each thread owns a whole row: it sums the squares (in double: a float accumulator over a row of a
// million loses 1e-4 of the sum), then writes x * rsqrt(mean + eps) * weight. Neighbouring threads read
// addresses N floats apart, so nothing coalesces; each row is read twice; a matrix with few rows leaves
// almost every thread idle.
#include <cuda_runtime.h>

constexpr int THREADS = 128;
constexpr float EPS = 1e-6f;

__global__ void rms_norm_naive(const float* __restrict__ in, const float* __restrict__ weight, float* __restrict__ out,
                               int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* x = in + (size_t)row * N;
    float* y = out + (size_t)row * N;
    double squares = 0.0;
    for (int j = 0; j < N; ++j) squares += x[j] * x[j];
    const float scale = rsqrtf((float)(squares / N) + EPS);
    for (int j = 0; j < N; ++j) y[j] = x[j] * scale * weight[j];
}

extern "C" void solve(const float* input, const float* weight, float* output, int M, int N) {
    rms_norm_naive<<<(M + THREADS - 1) / THREADS, THREADS>>>(input, weight, output, M, N);
}
