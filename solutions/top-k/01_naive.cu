// Rung 1 -- naive: one thread per row, insertion into the sorted list of the best K so far.
//
// The output rows serve as the list: a value enters only if the list is not full or it beats the K-th, then
// moves up past every entry it beats (a later column never beats an equal value: the tie rule). Correct and
// simple, but neighbouring threads read addresses N floats apart (nothing coalesces), a few long rows leave
// almost every thread of the GPU idle, and every insertion shifts entries in global memory.
#include <cuda_runtime.h>

constexpr int THREADS = 128;

__global__ void top_k_insertion(const float* __restrict__ x, float* __restrict__ values, int* __restrict__ indices,
                                int M, int N, int K) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= M) return;
    const float* row = x + (size_t)i * N;
    float* best = values + (size_t)i * K;
    int* where = indices + (size_t)i * K;
    int size = 0;
    for (int j = 0; j < N; ++j) {
        const float v = row[j];
        if (size == K && !(v > best[K - 1])) continue;
        int p = size < K ? size++ : K - 1;
        for (; p > 0 && best[p - 1] < v; --p) best[p] = best[p - 1], where[p] = where[p - 1];
        best[p] = v, where[p] = j;
    }
}

void solve(const float* x, float* values, int* indices, int M, int N, int K) {
    top_k_insertion<<<(M + THREADS - 1) / THREADS, THREADS>>>(x, values, indices, M, N, K);
}
