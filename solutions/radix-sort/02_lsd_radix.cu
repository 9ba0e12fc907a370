// Rung 2 -- LSD radix sort: four passes over 8-bit digits, each a tile histogram, a scan and a stable scatter.
//
// Over rung 1: O(N) work, each pass reading the keys twice and writing them once. Per pass (digit d of
// every key, lowest first):
//  1. tile_histograms: a block per tile of 4096 keys counts its digits in shared memory (the lanes of a warp
//     that share a digit, found by __match_any_sync, add their number with one atomic) and writes them
//     digit-major, counts[d * tiles + tile], so that the scan below runs over one digit's tiles in order.
//  2. scan_tiles: a block per digit scans that digit's counts over the tiles (exclusive) and writes the
//     digit's total; the first slot of (digit d, tile t) is then the total of the smaller digits plus
//     counts[d * tiles + t] -- every key of a smaller digit, then every key of digit d in an earlier tile.
//  3. scatter: a block per tile ranks its keys stably. Warp w owns 512 consecutive keys, read in 16 rounds
//     of 32 (coalesced). In each round __match_any_sync groups the lanes with the same digit; a lane's rank
//     is the number of lower lanes in its group plus the warp's running count of that digit, which the
//     group's lowest lane then advances. After the rounds, the warps' counts of each digit are scanned, and
//     each key goes to tile slot + earlier warps' count + its rank. Ties keep their order: tiles, warps,
//     rounds and lanes are all taken in position order.
// Slower than PyTorch: on an NVIDIA H200 (2026-11-27, `grader bench-solutions radix-sort`) 5.94 ms against
// torch.sort's 1.86 ms, 0.31x (3.15 vs 0.81 ms on keys_16m). torch.sort is CUB's onesweep: one histogram
// pass for all four digits, then per digit a single kernel that ranks a tile and finds its place by
// decoupled look-back, reading keys and values once and writing them once. Here each pass launches three
// kernels and reads the keys twice (count, then scatter) and their positions once, and the scatter's
// match-any ranking costs 16 warp-wide rounds per 512 keys. Onesweep's look-back (prefix-sum's rung 2) is
// the next rung to write.
// Keys are non-negative int32, so their bits sort as unsigned integers; the fourth pass's digit is at most 127.
// The passes alternate between scratch arrays and the outputs, so that the fourth writes the outputs; the
// first takes positions 0..N-1 instead of reading them.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr int THREADS = 256;
constexpr int WARPS = THREADS / 32;
constexpr int ITEMS = 16;  // rounds of 32 keys per warp
constexpr int TILE = THREADS * ITEMS;
constexpr int RADIX = 256;
constexpr int SCAN_THREADS = 1024;
constexpr unsigned FULL = 0xffffffffu;

__global__ void __launch_bounds__(THREADS) tile_histograms(const int* __restrict__ keys, int N, int shift, int tiles,
                                                           int* __restrict__ counts) {
    __shared__ int hist[RADIX];
    hist[threadIdx.x] = 0;
    __syncthreads();
    const long long base = (long long)blockIdx.x * TILE;
    const unsigned lower_lanes = (1u << (threadIdx.x & 31)) - 1;
#pragma unroll 4
    for (int r = 0; r < ITEMS; ++r) {  // every lane runs every round: the match below needs all 32
        const long long i = base + r * THREADS + threadIdx.x;
        const int digit = i < N ? (keys[i] >> shift) & 0xFF : RADIX;
        // Lanes with the same digit add their number once: keys from a narrow range share their high digits,
        // and 32 increments of one shared counter would be serialised.
        const unsigned peers = __match_any_sync(FULL, digit);
        if (digit < RADIX && (peers & lower_lanes) == 0) atomicAdd(&hist[digit], __popc(peers));
    }
    __syncthreads();
    counts[(long long)threadIdx.x * tiles + blockIdx.x] = hist[threadIdx.x];
}

// Exclusive scan of `value` over the block (SCAN_THREADS threads); the block's total in *total.
__device__ __forceinline__ int block_exclusive_scan(int value, int* warp_sums, int* total) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int inclusive = value;
#pragma unroll
    for (int offset = 1; offset < 32; offset *= 2) {
        const int up = __shfl_up_sync(FULL, inclusive, offset);
        if (lane >= offset) inclusive += up;
    }
    if (lane == 31) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0) {
        const int mine = lane < blockDim.x / 32 ? warp_sums[lane] : 0;
        int scanned = mine;
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) {
            const int up = __shfl_up_sync(FULL, scanned, offset);
            if (lane >= offset) scanned += up;
        }
        warp_sums[lane] = scanned - mine;
        if (lane == 31) *total = scanned;
    }
    __syncthreads();
    const int result = warp_sums[warp] + inclusive - value;
    __syncthreads();  // warp_sums and *total may be reused by the next call
    return result;
}

__global__ void __launch_bounds__(SCAN_THREADS) scan_tiles(int* __restrict__ counts, int tiles, int* __restrict__ totals) {
    __shared__ int warp_sums[32];
    __shared__ int chunk_total;
    int* row = counts + (long long)blockIdx.x * tiles;
    int carry = 0;
    for (int start = 0; start < tiles; start += SCAN_THREADS) {
        const int t = start + threadIdx.x;
        const int value = t < tiles ? row[t] : 0;
        const int scanned = block_exclusive_scan(value, warp_sums, &chunk_total);
        if (t < tiles) row[t] = carry + scanned;
        carry += chunk_total;  // read before the next call's first barrier lets thread 0 write it again
        __syncthreads();
    }
    if (threadIdx.x == 0) totals[blockIdx.x] = carry;
}

__global__ void __launch_bounds__(THREADS) scatter(const int* __restrict__ keys_in, const int* __restrict__ indices_in,
                                                   int* __restrict__ keys_out, int* __restrict__ indices_out, int N,
                                                   int shift, int tiles, const int* __restrict__ counts,
                                                   const int* __restrict__ totals) {
    __shared__ int warp_counts[WARPS][RADIX];  // per warp and digit: its count, then its first rank in the tile
    __shared__ int tile_start[RADIX];          // per digit: the first output slot of this tile's keys
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    for (int w = 0; w < WARPS; ++w) warp_counts[w][threadIdx.x] = 0;

    // Digit d's first slot: the keys of the smaller digits (a scan of the totals) plus d's in earlier tiles.
    {
        const int d = threadIdx.x;
        int inclusive = totals[d];
        const int own = inclusive;
#pragma unroll
        for (int offset = 1; offset < 32; offset *= 2) {
            const int up = __shfl_up_sync(FULL, inclusive, offset);
            if (lane >= offset) inclusive += up;
        }
        __shared__ int warp_totals[WARPS];
        if (lane == 31) warp_totals[warp] = inclusive;
        __syncthreads();
        int before = inclusive - own;
        for (int w = 0; w < warp; ++w) before += warp_totals[w];
        tile_start[d] = before + counts[(long long)d * tiles + blockIdx.x];
    }
    __syncthreads();

    const long long base = (long long)blockIdx.x * TILE + warp * (32 * ITEMS);
    const unsigned lower_lanes = (1u << lane) - 1;
    int key[ITEMS], rank[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const long long i = base + r * 32 + lane;
        const bool valid = i < N;
        key[r] = valid ? keys_in[i] : 0;
        const int digit = valid ? (key[r] >> shift) & 0xFF : RADIX;  // past the end: a group of its own
        const unsigned peers = __match_any_sync(FULL, digit);
        rank[r] = __popc(peers & lower_lanes) + (valid ? warp_counts[warp][digit] : 0);
        __syncwarp();
        if (valid && (peers & lower_lanes) == 0) warp_counts[warp][digit] += __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    {  // each digit's count in the earlier warps of this tile
        const int d = threadIdx.x;
        int running = 0;
        for (int w = 0; w < WARPS; ++w) {
            const int c = warp_counts[w][d];
            warp_counts[w][d] = running;
            running += c;
        }
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const long long i = base + r * 32 + lane;
        if (i >= N) break;
        const int digit = (key[r] >> shift) & 0xFF;
        const int slot = tile_start[digit] + warp_counts[warp][digit] + rank[r];
        keys_out[slot] = key[r];
        indices_out[slot] = indices_in ? indices_in[i] : (int)i;
    }
}

void solve(const int* keys, int* sorted_keys, int* indices, int N) {
    static int *tmp_keys = nullptr, *tmp_indices = nullptr, *counts = nullptr, *totals = nullptr;
    static int capacity = 0;
    const int tiles = (N + TILE - 1) / TILE;
    if (N > capacity) {
        cudaFree(tmp_keys), cudaFree(tmp_indices), cudaFree(counts), cudaFree(totals);
        const int tiles_max = (N + TILE - 1) / TILE;
        cudaMalloc(&tmp_keys, sizeof(int) * (size_t)N);
        cudaMalloc(&tmp_indices, sizeof(int) * (size_t)N);
        cudaMalloc(&counts, sizeof(int) * (size_t)RADIX * tiles_max);
        cudaMalloc(&totals, sizeof(int) * RADIX);
        capacity = N;
    }
    const int* src_keys = keys;
    const int* src_indices = nullptr;
    for (int pass = 0; pass < 4; ++pass) {
        const int shift = 8 * pass;
        int* dst_keys = pass % 2 == 0 ? tmp_keys : sorted_keys;
        int* dst_indices = pass % 2 == 0 ? tmp_indices : indices;
        tile_histograms<<<tiles, THREADS>>>(src_keys, N, shift, tiles, counts);
        scan_tiles<<<RADIX, SCAN_THREADS>>>(counts, tiles, totals);
        scatter<<<tiles, THREADS>>>(src_keys, src_indices, dst_keys, dst_indices, N, shift, tiles, counts, totals);
        src_keys = dst_keys, src_indices = dst_indices;
    }
}
