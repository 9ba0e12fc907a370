// Rung 1 — shared-memory tree reduction, one kernel launch per level of partial sums.
//
// The classic first parallel reduction. Each block of 256 threads loads 512 elements (two per thread,
// added on the way in), then halves the active threads at every step: thread t adds buf[t + s] to buf[t]
// (sequential addressing: the active threads stay packed into whole warps and hit distinct shared-memory
// banks). Thread 0 writes the block's sum to a scratch array, and the same kernel runs again on those
// partial sums until one block is left, which writes `output`. Every value takes part in log2(N) additions
// of similarly sized partial sums, so the float32 result is accurate. What it leaves on the table: a
// __syncthreads() per level, the last levels run by a handful of threads, one scalar load per element, and
// several kernel launches.
#include <cuda_runtime.h>

constexpr int THREADS = 256;
constexpr int PER_BLOCK = 2 * THREADS;                      // elements one block reduces
constexpr int MAX_PARTIALS = (1 << 28) / PER_BLOCK;         // partial sums of the first level, N <= 2^28

__device__ float g_partials[2][MAX_PARTIALS];               // ping-pong buffers for the levels

__global__ void __launch_bounds__(THREADS) reduce_level(const float* __restrict__ in, float* __restrict__ out, int n) {
    __shared__ float buf[THREADS];
    const int t = threadIdx.x;
    const long long i = (long long)blockIdx.x * PER_BLOCK + t;
    float v = 0.f;
    if (i < n) v = in[i];
    if (i + THREADS < n) v += in[i + THREADS];
    buf[t] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s /= 2) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = buf[0];
}

extern "C" void solve(const float* input, float* output, int N) {
    float* partials = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&partials), g_partials);
    const float* src = input;
    int n = N, level = 0;
    while (true) {
        const int blocks = (n + PER_BLOCK - 1) / PER_BLOCK;
        float* dst = blocks == 1 ? output : partials + (level % 2) * MAX_PARTIALS;
        reduce_level<<<blocks, THREADS>>>(src, dst, n);
        if (blocks == 1) break;
        src = dst;
        n = blocks;
        ++level;
    }
}
