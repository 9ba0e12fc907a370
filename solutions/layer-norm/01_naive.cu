// Rung 1 — naive layer norm: one thread per row, three passes over the row.
//
// Each thread owns a whole row: it sums the row for the mean, sums the squared deviations for the variance
// (two passes: the one-pass E[x^2] - E[x]^2 cancels when the mean is large next to the spread), then writes
// (x - mean) * rsqrt(var + eps) * gamma + beta. The sums are doubles: a float accumulator over a row of a
// million loses 1e-4 of the variance. Neighbouring threads read addresses N floats apart (nothing
// coalesces), each row is read three times, and a matrix with few rows leaves almost every thread idle.
#include <cuda_runtime.h>

constexpr int THREADS = 128;
constexpr float EPS = 1e-5f;

__global__ void layer_norm_naive(const float* __restrict__ in, const float* __restrict__ gamma,
                                 const float* __restrict__ beta, float* __restrict__ out, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* x = in + (size_t)row * N;
    float* y = out + (size_t)row * N;

    double sum = 0.0;
    for (int j = 0; j < N; ++j) sum += x[j];
    const float mean = (float)(sum / N);

    double squares = 0.0;
    for (int j = 0; j < N; ++j) {
        const float d = x[j] - mean;
        squares += d * d;
    }
    const float rstd = rsqrtf((float)(squares / N) + EPS);

    for (int j = 0; j < N; ++j) y[j] = (x[j] - mean) * rstd * gamma[j] + beta[j];
}

extern "C" void solve(const float* input, const float* gamma, const float* beta, float* output, int M, int N) {
    layer_norm_naive<<<(M + THREADS - 1) / THREADS, THREADS>>>(input, gamma, beta, output, M, N);
}
