// Rung 1 -- naive: clear the counts, then one thread per value and one global atomicAdd each.
//
// The baseline: every increment is an atomic on the counts in global memory, resolved in the L2 cache. With
// values spread over many bins they rarely collide; when many threads hit the same bin (the skewed tests)
// the L2 serialises them, and the kernel slows down many times over.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void histogram_global(const int* __restrict__ values, int* __restrict__ counts, int N) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) atomicAdd(&counts[values[i]], 1);
}

void solve(const int* values, int* counts, int N, int BINS) {
    cudaMemsetAsync(counts, 0, sizeof(int) * (size_t)BINS);
    histogram_global<<<(N + THREADS - 1) / THREADS, THREADS>>>(values, counts, N);
}
