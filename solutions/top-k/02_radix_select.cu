// Rung 2 -- radix select with a block per row, a bitonic sort of the K survivors; short rows a warp each.
//
// Over rung 1:
//  * Keys: each float maps to a 32-bit unsigned key that orders the same way (a negative value has all its
//    bits flipped, a positive one its sign bit set; -0 is taken as +0). A composite (key << 32 | ~column)
//    is then larger exactly when its entry ranks first: a larger value, or an equal one in a smaller column.
//  * Long rows (a block per row): the K-th largest key is found a byte at a time, most significant first.
//    Each pass builds a 256-bin histogram in shared memory of the keys that match the bytes found so far, and
//    warp 0 finds the byte that holds the K-th (a suffix scan of the bins over its lanes). The first byte holds
//    the sign and the exponent and takes few values: there the lanes of a warp that share a byte (found by
//    __match_any_sync) add their number with one atomic instead of queueing on one counter. Once a byte's keys
//    are exactly the ones still needed, the search stops early. Then one pass over the row collects every key
//    above the threshold (in any order) and, of the keys equal to it, those with the smallest columns: a
//    ballot per warp and a scan over the warps rank them in column order. The K survivors are sorted by a
//    bitonic network in shared memory, largest composite first, and written out.
//  * Short rows (N <= 512, K <= 32; expert routing): a warp per row holds the row's composites in
//    registers and takes the maximum K times (a lane-local maximum, then a shuffle reduction); the winner is
//    cleared where it lives and lane r keeps rank r until one coalesced store at the end.
#include <cuda_runtime.h>
#include <stdint.h>

constexpr unsigned FULL = 0xffffffffu;
constexpr int MAX_THREADS = 512;
constexpr int MAX_K = 1024;
constexpr int WARP_ROWS = 8;  // rows per block on the warp path

__device__ __forceinline__ unsigned order_key(float v) {
    unsigned u = __float_as_uint(v);
    if (u == 0x80000000u) u = 0;
    return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

__device__ __forceinline__ float key_value(unsigned k) {
    return __uint_as_float((k & 0x80000000u) ? (k ^ 0x80000000u) : ~k);
}

__device__ __forceinline__ unsigned long long composite(unsigned key, int column) {
    return ((unsigned long long)key << 32) | (unsigned)~column;
}

__device__ __forceinline__ void write_entry(unsigned long long c, float* value, int* index) {
    *value = key_value((unsigned)(c >> 32));
    *index = (int)~(unsigned)c;
}

template <int ITEMS>
__global__ void __launch_bounds__(WARP_ROWS * 32) top_k_warp(const float* __restrict__ x, float* __restrict__ values,
                                                             int* __restrict__ indices, int M, int N, int K) {
    const int lane = threadIdx.x & 31;
    const long long row = (long long)blockIdx.x * WARP_ROWS + (threadIdx.x >> 5);
    if (row >= M) return;  // the whole warp
    const float* r = x + row * N;
    unsigned long long item[ITEMS];
#pragma unroll
    for (int s = 0; s < ITEMS; ++s) {
        const int j = s * 32 + lane;
        item[s] = j < N ? composite(order_key(r[j]), j) : 0ull;  // 0: below every real entry
    }
    unsigned long long mine = 0;  // lane r: the entry of rank r
    for (int rank = 0; rank < K; ++rank) {
        unsigned long long best = item[0];
#pragma unroll
        for (int s = 1; s < ITEMS; ++s) best = item[s] > best ? item[s] : best;
#pragma unroll
        for (int offset = 16; offset > 0; offset /= 2) {
            const unsigned long long other = __shfl_xor_sync(FULL, best, offset);
            best = other > best ? other : best;
        }
#pragma unroll
        for (int s = 0; s < ITEMS; ++s)
            if (item[s] == best) item[s] = 0;
        if (lane == rank) mine = best;
    }
    if (lane < K) write_entry(mine, values + row * K + lane, indices + row * K + lane);
}

__global__ void __launch_bounds__(MAX_THREADS) top_k_block(const float* __restrict__ x, float* __restrict__ values,
                                                           int* __restrict__ indices, int N, int K) {
    __shared__ int hist[256];
    __shared__ unsigned long long cand[MAX_K];
    __shared__ int warp_equal[MAX_THREADS / 32];
    __shared__ int found_digit, found_above, found_count, greater_count;
    const float* row = x + (size_t)blockIdx.x * N;
    const int tid = threadIdx.x, T = blockDim.x, lane = tid & 31, warp = tid >> 5, warps = T >> 5;
    const unsigned lower_lanes = (1u << lane) - 1;

    // 1. The threshold: the bytes of the K-th largest key, most significant first.
    unsigned prefix = 0, mask = 0;
    int remaining = K;  // how many of the keys matching prefix under mask are still to be taken
    for (int shift = 24; shift >= 0; shift -= 8) {
        for (int b = tid; b < 256; b += T) hist[b] = 0;
        __syncthreads();
        if (shift == 24) {  // the top byte (sign and exponent) takes few values: aggregate a warp's increments
            for (int start = 0; start < N; start += T) {  // the same rounds in every lane, for the match
                const int j = start + tid;
                const int digit = j < N ? (int)(order_key(row[j]) >> 24) : 256;
                const unsigned peers = __match_any_sync(FULL, digit);
                if (digit < 256 && (peers & lower_lanes) == 0) atomicAdd(&hist[digit], __popc(peers));
            }
        } else {
            for (int j = tid; j < N; j += T) {
                const unsigned k = order_key(row[j]);
                if ((k & mask) == prefix) atomicAdd(&hist[(k >> shift) & 0xFF], 1);
            }
        }
        __syncthreads();
        if (warp == 0) {  // lane l holds bins 8l..8l+7; the byte is where the count from the top reaches remaining
            int c[8], local = 0;
#pragma unroll
            for (int t = 0; t < 8; ++t) c[t] = hist[lane * 8 + t], local += c[t];
            int suffix = local;  // bins of this lane and every lane above
#pragma unroll
            for (int offset = 1; offset < 32; offset *= 2) {
                const int below = __shfl_down_sync(FULL, suffix, offset);
                if (lane + offset < 32) suffix += below;
            }
            int above = suffix - local;
            if (above < remaining && remaining <= suffix) {
#pragma unroll
                for (int t = 7; t >= 0; --t) {
                    if (above + c[t] >= remaining) {
                        found_digit = lane * 8 + t, found_above = above, found_count = c[t];
                        break;
                    }
                    above += c[t];
                }
            }
        }
        __syncthreads();
        remaining -= found_above;  // keys with a larger byte are all taken
        prefix |= (unsigned)found_digit << shift;
        mask |= 0xFFu << shift;
        const bool all_taken = found_count == remaining;
        __syncthreads();  // everyone has read found_* and hist before the next pass writes them
        if (all_taken) break;
    }

    // 2. The survivors: every key above the threshold, and the first `remaining` equal to it by column.
    const int above_total = K - remaining;
    if (tid == 0) greater_count = 0;
    __syncthreads();
    int equal_taken = 0;  // the same in every thread
    for (int start = 0; start < N; start += T) {
        const int j = start + tid;
        unsigned k = 0;
        bool greater = false, equal = false;
        if (j < N) {
            k = order_key(row[j]);
            greater = (k & mask) > prefix, equal = (k & mask) == prefix;
        }
        if (greater) cand[atomicAdd(&greater_count, 1)] = composite(k, j);
        if (equal_taken < remaining) {
            const unsigned ballot = __ballot_sync(FULL, equal);
            if (lane == 0) warp_equal[warp] = __popc(ballot);
            __syncthreads();
            int before = 0, total = 0;
            for (int w = 0; w < warps; ++w) {
                before += w < warp ? warp_equal[w] : 0;
                total += warp_equal[w];
            }
            const int rank = equal_taken + before + __popc(ballot & lower_lanes);
            if (equal && rank < remaining) cand[above_total + rank] = composite(k, j);
            equal_taken += total;
            __syncthreads();
        }
    }

    // 3. Sort the K survivors, largest composite first (padding with 0 to a power of two), and write them.
    int P = 1;
    while (P < K) P *= 2;
    for (int i = K + tid; i < P; i += T) cand[i] = 0;
    __syncthreads();
    for (int size = 2; size <= P; size *= 2) {
        for (int stride = size / 2; stride > 0; stride /= 2) {
            for (int t = tid; t < P / 2; t += T) {
                const int i = 2 * t - (t & (stride - 1)), l = i + stride;
                const unsigned long long a = cand[i], b = cand[l];
                if ((a < b) == ((i & size) == 0)) cand[i] = b, cand[l] = a;
            }
            __syncthreads();
        }
    }
    for (int r = tid; r < K; r += T)
        write_entry(cand[r], values + (size_t)blockIdx.x * K + r, indices + (size_t)blockIdx.x * K + r);
}

void solve(const float* x, float* values, int* indices, int M, int N, int K) {
    if (N <= 512 && K <= 32) {
        const unsigned blocks = (unsigned)((M + WARP_ROWS - 1) / WARP_ROWS);
        if (N <= 128)
            top_k_warp<4><<<blocks, WARP_ROWS * 32>>>(x, values, indices, M, N, K);
        else
            top_k_warp<16><<<blocks, WARP_ROWS * 32>>>(x, values, indices, M, N, K);
        return;
    }
    int threads = (N + 31) / 32 * 32;
    threads = threads < 64 ? 64 : threads > MAX_THREADS ? MAX_THREADS : threads;
    top_k_block<<<M, threads>>>(x, values, indices, N, K);
}
