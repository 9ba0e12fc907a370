// Rung 1 -- naive layer norm backward: a thread per row for dX, then a thread per column for dgamma and dbeta.
//
// Kernel 1: each thread owns a row. It recomputes the mean and the two-pass variance (the forward's statistics
// are not inputs), sums g = gamma * dY and g * xhat, writes dX = rstd * (g - mean(g) - xhat * mean(g * xhat)),
// and keeps its row's mean and rstd in scratch memory. Its loads do not coalesce (threads N floats apart).
// Kernel 2: each thread owns a column and adds dY * xhat and dY down it, row after row, in doubles; there
// neighbouring threads read neighbouring columns, so the loads do coalesce, but X and dY are read again.
#include <cuda_runtime.h>

constexpr int THREADS = 128;
constexpr float EPS = 1e-5f;

__global__ void rows_naive(const float* __restrict__ in, const float* __restrict__ gamma, const float* __restrict__ dY,
                           float* __restrict__ dX, float2* __restrict__ stats, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* x = in + (size_t)row * N;
    const float* dy = dY + (size_t)row * N;
    double sum = 0.0;
    for (int j = 0; j < N; ++j) sum += x[j];
    const float mean = (float)(sum / N);
    double squares = 0.0;
    for (int j = 0; j < N; ++j) {
        const float d = x[j] - mean;
        squares += d * d;
    }
    const float rstd = rsqrtf((float)(squares / N) + EPS);
    double sum_g = 0.0, sum_gx = 0.0;
    for (int j = 0; j < N; ++j) {
        const float g = gamma[j] * dy[j];
        sum_g += g;
        sum_gx += g * ((x[j] - mean) * rstd);
    }
    const float mean_g = (float)(sum_g / N), mean_gx = (float)(sum_gx / N);
    float* out = dX + (size_t)row * N;
    for (int j = 0; j < N; ++j) out[j] = rstd * (gamma[j] * dy[j] - mean_g - (x[j] - mean) * rstd * mean_gx);
    stats[row] = make_float2(mean, rstd);
}

__global__ void columns_naive(const float* __restrict__ in, const float* __restrict__ dY,
                              const float2* __restrict__ stats, float* __restrict__ dgamma, float* __restrict__ dbeta,
                              int M, int N) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    double sum_gamma = 0.0, sum_beta = 0.0;
    for (int r = 0; r < M; ++r) {
        const size_t at = (size_t)r * N + col;
        const float2 s = stats[r];
        sum_gamma += dY[at] * ((in[at] - s.x) * s.y);
        sum_beta += dY[at];
    }
    dgamma[col] = (float)sum_gamma;
    dbeta[col] = (float)sum_beta;
}

// Scratch for the rows' (mean, rstd), grown when a larger call comes (kept between calls).
static float2* stats_for(int rows) {
    static float2* buffer = nullptr;
    static int capacity = 0;
    if (rows > capacity) {
        cudaFree(buffer);
        cudaMalloc(&buffer, (size_t)rows * sizeof(float2));
        capacity = rows;
    }
    return buffer;
}

extern "C" void solve(const float* input, const float* gamma, const float* dY, float* dX, float* dgamma, float* dbeta,
                      int M, int N) {
    float2* stats = stats_for(M);
    rows_naive<<<(M + THREADS - 1) / THREADS, THREADS>>>(input, gamma, dY, dX, stats, M, N);
    columns_naive<<<(N + THREADS - 1) / THREADS, THREADS>>>(input, dY, stats, dgamma, dbeta, M, N);
}
