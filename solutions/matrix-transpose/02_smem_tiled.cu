// Rung 2 — 32x32 tiles through shared memory, padded against bank conflicts.
//
// Over rung 1: a block of 32x8 threads reads a 32x32 tile of the input, row by row (coalesced: a warp reads
// 32 consecutive floats), into shared memory; after __syncthreads() it writes the tile's columns as rows of
// the output (coalesced again). Both directions now move whole 128-byte lines. Reading a column of a
// float[32][32] tile would put all 32 lanes on one shared-memory bank (32-way conflict); the extra column
// of float[32][33] shifts every row by one bank, so a column read touches 32 different banks. Each thread
// moves 4 elements (8 rows of threads cover 32 rows), so 4 independent loads are in flight per thread.
// Grid: x over tiles of columns, y over tiles of rows (gridDim.y <= 65535 covers M <= 2^21 rows; longer
// matrices loop over tile rows).
#include <cuda_runtime.h>

constexpr int TILE = 32;
constexpr int ROWS = 8;  // threads per tile column: each thread moves TILE / ROWS = 4 elements

__global__ void __launch_bounds__(TILE * ROWS) transpose_tiled(const float* __restrict__ in, float* __restrict__ out,
                                                               int M, int N) {
    __shared__ float tile[TILE][TILE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col0 = blockIdx.x * TILE;  // first input column of this tile
    for (int row0 = blockIdx.y * TILE; row0 < M; row0 += gridDim.y * TILE) {
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = row0 + ty + k, c = col0 + tx;
            if (r < M && c < N) tile[ty + k][tx] = in[(size_t)r * N + c];
        }
        __syncthreads();
        // Output row = input column col0 + ty + k; output column = input row row0 + tx.
#pragma unroll
        for (int k = 0; k < TILE; k += ROWS) {
            const int r = col0 + ty + k, c = row0 + tx;
            if (r < N && c < M) out[(size_t)r * M + c] = tile[tx][ty + k];
        }
        __syncthreads();  // the tile is reused by the next row of tiles
    }
}

extern "C" void solve(const float* input, float* output, int M, int N) {
    const int row_tiles = (M + TILE - 1) / TILE;
    const dim3 blocks((N + TILE - 1) / TILE, row_tiles < 65535 ? row_tiles : 65535);
    transpose_tiled<<<blocks, dim3(TILE, ROWS)>>>(input, output, M, N);
}
