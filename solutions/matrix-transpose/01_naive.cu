// Rung 1 — naive transpose: one thread per element.
//
// Thread (x, y) of a 2-D grid copies input[y][x] to output[x][y]. The 32 threads of a warp take consecutive
// x, so their reads of a row of the input are coalesced, but their writes go down a column of the output,
// M floats apart: each 4-byte store is its own 32-byte memory transaction, so the writes move 8 times the
// bytes they carry. That is what rung 2 fixes.
#include <cuda_runtime.h>

__global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;  // column of the input
    if (x >= N) return;
    for (int y = blockIdx.y * blockDim.y + threadIdx.y; y < M; y += gridDim.y * blockDim.y)  // row of the input
        out[(size_t)x * M + y] = in[(size_t)y * N + x];
}

extern "C" void solve(const float* input, float* output, int M, int N) {
    const dim3 threads(32, 8);
    const int row_blocks = (M + 7) / 8;
    const dim3 blocks((N + 31) / 32, row_blocks < 65535 ? row_blocks : 65535);
    transpose_naive<<<blocks, threads>>>(input, output, M, N);
}
