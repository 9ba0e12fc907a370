// expect: runtime_error
// message: tall_skinny
// The textbook tiled transpose: dim3(ceil(N/32), ceil(M/32)) blocks of 32x8 threads, the rows of tiles on the
// grid's y axis, which holds at most 65,535 blocks. Past M = 2,097,120 the launch is refused ("invalid
// configuration argument"): the harness's cudaGetLastError after solve stops the run at tall_skinny
// (M = 4,194,319). Every test below that size passes, as every test did before tall_skinny reached it.
#include <cuda_runtime.h>

constexpr int TILE = 32, ROWS = 8;

__global__ void transpose(const float* __restrict__ in, float* __restrict__ out, int M, int N) {
    __shared__ float tile[TILE][TILE + 1];
    const int col0 = blockIdx.x * TILE, row0 = blockIdx.y * TILE;
    for (int k = 0; k < TILE; k += ROWS) {
        const int r = row0 + threadIdx.y + k, c = col0 + threadIdx.x;
        if (r < M && c < N) tile[threadIdx.y + k][threadIdx.x] = in[(size_t)r * N + c];
    }
    __syncthreads();
    for (int k = 0; k < TILE; k += ROWS) {
        const int r = col0 + threadIdx.y + k, c = row0 + threadIdx.x;
        if (r < N && c < M) out[(size_t)r * M + c] = tile[threadIdx.x][threadIdx.y + k];
    }
}

extern "C" void solve(const float* input, float* output, int M, int N) {
    const dim3 blocks((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    transpose<<<blocks, dim3(TILE, ROWS)>>>(input, output, M, N);
}
