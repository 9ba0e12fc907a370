// Rung 2 -- vector CSR: row starts from a tiled scan kept in shared memory, a group of lanes per row.
//
// Over rung 1:
//  * Row starts without a row_ptr array: blocks own tiles of 256 consecutive rows. A first kernel sums each
//    tile's lengths, a second (one block) scans the tile totals, and the SpMV kernel scans its own tile's
//    256 lengths in shared memory and adds the tile's carry. Nothing of size M is written or read back.
//  * A group of G lanes per row (G a power of two from 1 to 32, about half the mean row length L / 2):
//    the lanes read consecutive entries of their row (coalesced), each keeps a partial sum, and G - 1
//    shuffles add them. A warp then holds 32 / G rows, so short rows waste few lanes, long rows get a warp.
//  * Every group runs the same number of rounds (rows past M count as empty), so the shuffles always have all
//    32 lanes of the warp.
#include <cuda_runtime.h>

constexpr int THREADS = 256;  // also the rows per tile
constexpr int SCAN_THREADS = 1024;
constexpr unsigned FULL = 0xffffffffu;

// Inclusive scan over the block's warps' values (blockDim.x threads); warp_sums holds 32 ints.
__device__ __forceinline__ int block_inclusive_scan(int value, int* warp_sums) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int inclusive = value;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int up = __shfl_up_sync(FULL, inclusive, offset);
        if (lane >= offset) inclusive += up;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    int before = 0;
    for (int w = 0; w < warp; ++w) before += warp_sums[w];
    __syncthreads();  // warp_sums may be reused
    return before + inclusive;
}

__global__ void __launch_bounds__(THREADS) tile_totals(const int* __restrict__ row_lengths, int M, int* __restrict__ totals) {
    __shared__ int warp_sums[32];
    const int i = blockIdx.x * THREADS + threadIdx.x;
    const int total = block_inclusive_scan(i < M ? row_lengths[i] : 0, warp_sums);
    if (threadIdx.x == THREADS - 1) totals[blockIdx.x] = total;
}

// Exclusive scan of the tile totals in place, one block, 1024 at a time with a carry.
__global__ void __launch_bounds__(SCAN_THREADS) scan_tiles(int* __restrict__ totals, int tiles) {
    __shared__ int warp_sums[32];
    __shared__ int chunk_total;
    int carry = 0;
    for (int base = 0; base < tiles; base += SCAN_THREADS) {
        const int t = base + threadIdx.x;
        const int value = t < tiles ? totals[t] : 0;
        const int inclusive = block_inclusive_scan(value, warp_sums);
        if (t < tiles) totals[t] = carry + inclusive - value;
        if (threadIdx.x == SCAN_THREADS - 1) chunk_total = inclusive;
        __syncthreads();
        carry += chunk_total;
        __syncthreads();
    }
}

template <int G>
__global__ void __launch_bounds__(THREADS) spmv_groups(const int* __restrict__ row_lengths, const int* __restrict__ cols,
                                                       const float* __restrict__ vals, const float* __restrict__ x,
                                                       float* __restrict__ y, int M, const int* __restrict__ tile_carry) {
    __shared__ int warp_sums[32];
    __shared__ int start[THREADS], length[THREADS];
    const int row0 = blockIdx.x * THREADS;
    const int mine = row0 + threadIdx.x < M ? row_lengths[row0 + threadIdx.x] : 0;
    const int inclusive = block_inclusive_scan(mine, warp_sums);
    start[threadIdx.x] = tile_carry[blockIdx.x] + inclusive - mine;
    length[threadIdx.x] = mine;
    __syncthreads();
    constexpr int GROUPS = THREADS / G;
    const int group = threadIdx.x / G, lane = threadIdx.x % G;
    for (int r = group; r < THREADS; r += GROUPS) {
        const int p = start[r], n = length[r];  // 0 for rows past M
        float sum = 0.0f;
#pragma unroll 4
        for (int k = lane; k < n; k += G) sum += __ldg(vals + p + k) * __ldg(x + __ldg(cols + p + k));
#pragma unroll
        for (int offset = G / 2; offset > 0; offset /= 2) sum += __shfl_xor_sync(FULL, sum, offset);
        if (lane == 0 && row0 + r < M) y[row0 + r] = sum;
    }
}

template <int G>
static void launch(int tiles, const int* row_lengths, const int* cols, const float* vals, const float* x, float* y,
                   int M, const int* carry) {
    spmv_groups<G><<<tiles, THREADS>>>(row_lengths, cols, vals, x, y, M, carry);
}

void solve(const int* row_lengths, const int* cols, const float* vals, const float* x, float* y, int M, int N, int L) {
    static int* carry = nullptr;
    static int capacity = 0;
    const int tiles = (M + THREADS - 1) / THREADS;
    if (tiles > capacity) {
        cudaFree(carry);
        cudaMalloc(&carry, sizeof(int) * (size_t)tiles);
        capacity = tiles;
    }
    tile_totals<<<tiles, THREADS>>>(row_lengths, M, carry);
    scan_tiles<<<1, SCAN_THREADS>>>(carry, tiles);
    // Lanes per row: the largest power of two up to a quarter of L (half the mean length L / 2), at most a
    // warp, so that each lane takes about two entries of a typical row.
    int lanes = 1;
    while (lanes < 32 && lanes * 2 <= L / 4) lanes *= 2;
    switch (lanes) {
        case 32: launch<32>(tiles, row_lengths, cols, vals, x, y, M, carry); break;
        case 16: launch<16>(tiles, row_lengths, cols, vals, x, y, M, carry); break;
        case 8: launch<8>(tiles, row_lengths, cols, vals, x, y, M, carry); break;
        case 4: launch<4>(tiles, row_lengths, cols, vals, x, y, M, carry); break;
        case 2: launch<2>(tiles, row_lengths, cols, vals, x, y, M, carry); break;
        default: launch<1>(tiles, row_lengths, cols, vals, x, y, M, carry);
    }
}
