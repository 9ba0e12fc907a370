// Rung 1 — naive vector add: one thread per element.
//
// The kernel every CUDA course starts with. Thread i of the grid computes C[i] = A[i] + B[i]; neighbouring
// threads touch neighbouring floats, so every warp's loads and stores are already coalesced (one 128-byte
// line per warp per array). The grid has ceil(N / 256) blocks and the `i < N` guard keeps the last block from
// running past the end. It already reaches most of the copy bandwidth on large inputs; what it leaves on the
// table is instruction overhead (one 4-byte load per array per thread, a block launched per 256 elements)
// and too few bytes in flight per thread.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void vector_add(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    const int blocks = (N + THREADS - 1) / THREADS;
    vector_add<<<blocks, THREADS>>>(A, B, C, N);
}
