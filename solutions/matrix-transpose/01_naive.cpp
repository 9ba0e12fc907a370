// CPU rung 1 -- naive transpose, one thread.
//
// Two loops in input order: reads walk along a row (sequential), writes walk down a column of the output,
// M floats apart. Every write touches a different cache line, and for large M each line is evicted before
// its neighbours are written: the same problem as rung 1 on the GPU, met by the CPU's caches.
#include <cstddef>

void solve(const float* input, float* output, int M, int N) {
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) output[(size_t)j * M + i] = input[(size_t)i * N + j];
}
