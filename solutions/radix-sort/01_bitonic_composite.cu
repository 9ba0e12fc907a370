// Rung 1 -- naive: a bitonic sorting network over 64-bit composite keys (key << 32 | position).
//
// Stability for free: two equal keys differ in their low 32 bits, their positions, so any sort of the
// composite keys, stable or not, gives equal keys in position order. The network pads N to a power of two
// with the largest composite key and runs log2(P) (log2(P) + 1) / 2 compare-exchange steps, each a kernel
// launch over P / 2 pairs in global memory: O(N log^2 N) work, every step a full pass over memory.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int THREADS = 256;

__global__ void make_composite(const int* __restrict__ keys, unsigned long long* __restrict__ items, int N, long long P) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) items[i] = ((unsigned long long)(unsigned)keys[i] << 32) | (unsigned)i;
    else if (i < P) items[i] = ~0ull;
}

// One step of the network: pairs (i, i ^ j) with i < i ^ j, ascending where i & k is 0.
__global__ void bitonic_step(unsigned long long* __restrict__ items, long long P, long long j, long long k) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= P / 2) return;
    const long long i = 2 * t - (t & (j - 1));  // the lower index of pair t: bit j of i is clear
    const long long partner = i + j;
    const unsigned long long a = items[i], b = items[partner];
    const bool ascending = (i & k) == 0;
    if ((a > b) == ascending) items[i] = b, items[partner] = a;
}

__global__ void split_composite(const unsigned long long* __restrict__ items, int* __restrict__ sorted_keys,
                                int* __restrict__ indices, int N) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= N) return;
    sorted_keys[i] = (int)(items[i] >> 32);
    indices[i] = (int)(items[i] & 0xffffffffu);
}

void solve(const int* keys, int* sorted_keys, int* indices, int N) {
    static unsigned long long* items = nullptr;
    static long long capacity = 0;
    long long P = 1;
    while (P < N) P *= 2;
    if (P > capacity) {
        cudaFree(items);
        cudaMalloc(&items, sizeof(unsigned long long) * P);
        capacity = P;
    }
    const unsigned all = (unsigned)((P + THREADS - 1) / THREADS), half = (unsigned)((P / 2 + THREADS - 1) / THREADS);
    make_composite<<<all, THREADS>>>(keys, items, N, P);
    for (long long k = 2; k <= P; k *= 2)
        for (long long j = k / 2; j > 0; j /= 2) bitonic_step<<<half, THREADS>>>(items, P, j, k);
    split_composite<<<(N + THREADS - 1) / THREADS, THREADS>>>(items, sorted_keys, indices, N);
}
