// Rung 1 -- naive Jacobi: one kernel launch per sweep, one thread per point, global memory only.
//
// Each sweep reads the previous grid and writes the next: an interior point gets the average of its four
// neighbours, a boundary point (first and last row and column) keeps its value. Two buffers alternate (output
// and a scratch grid kept between calls), arranged so that the last sweep writes into output. The grid is
// one-dimensional (H * W threads, rows on no axis of their own), so a grid of millions of rows launches.
// Neighbouring threads read neighbouring addresses, and the up and down rows are mostly found in L1 and L2,
// but every sweep crosses DRAM (or L2) twice, in and out.
#include <cuda_runtime.h>
#include <utility>

constexpr int THREADS = 256;

__global__ void sweep(const float* __restrict__ u, float* __restrict__ v, int H, int W) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= (long long)H * W) return;
    const int i = (int)(p / W), j = (int)(p % W);
    if (i == 0 || i == H - 1 || j == 0 || j == W - 1) v[p] = u[p];
    else v[p] = 0.25f * (u[p - W] + u[p + W] + u[p - 1] + u[p + 1]);
}

// Scratch for the second grid, grown when a larger call comes (kept between calls).
static float* scratch_for(size_t count) {
    static float* buffer = nullptr;
    static size_t capacity = 0;
    if (count > capacity) {
        cudaFree(buffer);
        cudaMalloc(&buffer, count * sizeof(float));
        capacity = count;
    }
    return buffer;
}

extern "C" void solve(const float* input, float* output, int H, int W, int S) {
    const size_t n = (size_t)H * W;
    const unsigned blocks = (unsigned)((n + THREADS - 1) / THREADS);
    float* scratch = scratch_for(n);
    // sweep k writes output when S - 1 - k is even, so the last one (k = S - 1) does
    float* dst = (S % 2 == 1) ? output : scratch;
    float* other = (S % 2 == 1) ? scratch : output;
    sweep<<<blocks, THREADS>>>(input, dst, H, W);
    for (int k = 1; k < S; ++k) {
        std::swap(dst, other);
        sweep<<<blocks, THREADS>>>(other, dst, H, W);
    }
}
