// Rung 1 — scan then propagate: block scans in shared memory (Hillis–Steele), a recursive scan of the block
// totals, then a kernel that adds each block's carry.
//
// The textbook multi-kernel scan. Kernel 1: each block of 1024 threads loads 1024 elements into shared
// memory and scans them in log2(1024) = 10 steps; at step d every element adds the one 2^d before it (two
// buffers, so no element is overwritten while another still reads it). It writes the scanned values and
// the block's total. The totals (N / 1024 of them) are scanned the same way, recursively, and kernel 2 adds
// to every element of block b the scanned total of blocks 0..b-1. Every output is a tree-shaped float32
// sum, so it is accurate. The cost: the output is written, re-read and written again (16N bytes, not 8N),
// Hillis–Steele does N log N additions instead of N, and 2 * log_1024(N) launches.
#include <cuda_runtime.h>

constexpr int THREADS = 1024;
// Scratch for the block totals of every level: N/1024 + N/1024^2 + ... for N <= 2^28.
constexpr int LEVEL0 = (1 << 28) / THREADS, LEVEL1 = LEVEL0 / THREADS, LEVEL2 = 1;
__device__ float g_totals[LEVEL0 + LEVEL1 + LEVEL2 + 64];

__global__ void __launch_bounds__(THREADS) scan_blocks(const float* __restrict__ in, float* __restrict__ out,
                                                       float* __restrict__ totals, int n) {
    __shared__ float buf[2][THREADS];
    const int t = threadIdx.x;
    const long long i = (long long)blockIdx.x * THREADS + t;
    int src = 0;
    buf[src][t] = i < n ? in[i] : 0.f;
    __syncthreads();
    for (int d = 1; d < THREADS; d *= 2) {
        buf[1 - src][t] = t >= d ? buf[src][t] + buf[src][t - d] : buf[src][t];
        src = 1 - src;
        __syncthreads();
    }
    if (i < n) out[i] = buf[src][t];
    if (t == THREADS - 1) totals[blockIdx.x] = buf[src][t];
}

// Block b > 0 of the output gets the inclusive scan of the totals of blocks 0..b-1 added to it.
__global__ void add_carries(float* __restrict__ out, const float* __restrict__ scanned_totals, int n) {
    if (blockIdx.x == 0) return;
    const long long i = (long long)blockIdx.x * THREADS + threadIdx.x;
    if (i < n) out[i] += scanned_totals[blockIdx.x - 1];
}

// Inclusive scan of in[0..n) into out; `scratch` has room for the totals of this level and all below it.
static void scan(const float* in, float* out, int n, float* scratch) {
    const int blocks = (n + THREADS - 1) / THREADS;
    scan_blocks<<<blocks, THREADS>>>(in, out, scratch, n);
    if (blocks == 1) return;
    scan(scratch, scratch, blocks, scratch + blocks);  // in place: a block reads its part before writing it
    add_carries<<<blocks, THREADS>>>(out, scratch, n);
}

extern "C" void solve(const float* input, float* output, int N) {
    float* scratch = nullptr;
    cudaGetSymbolAddress(reinterpret_cast<void**>(&scratch), g_totals);
    scan(input, output, N, scratch);
}
