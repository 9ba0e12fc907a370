// Rung 2 -- tensor cores: WMMA 16x16x16 half x half + float32, shared-memory tiles loaded by cp.async,
// double-buffered.
//
// A block computes a 128x128 tile of C with 8 warps in a 2x4 grid, each warp a 64x32 block as 4x2 float32
// accumulator fragments. Per step of 32 k the block stages A[128x32] and B[32x128] in shared memory (rows padded
// by 8 halves, so the fragment loads of neighbouring rows fall in different banks) and each warp multiplies
// 2 x (4x2) fragment pairs: every value loaded from memory feeds 64 to 128 tensor-core products. While a step
// multiplies, cp.async fetches the next one into the other buffer. Rows of A (of B) are 16-byte aligned only
// when K (N) is a multiple of 8: then whole 8-half chunks are copied by cp.async, zero-filled past the edges;
// otherwise the tiles are loaded element by element with the same zero fill. The accumulators go out through
// a per-warp shared-memory patch, so any M and N are written without a bounds check in the tensor-core path.
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>

using namespace nvcuda;

namespace {

constexpr int BM = 128, BN = 128, BK = 32;
constexpr int WARPS_M = 2, WARPS_N = 4, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // 64 x 32 per warp
constexpr int FM = WM / 16, FN = WN / 16;            // 4 x 2 fragments
constexpr int PAD = 8;                               // halves: keeps ldm a multiple of 8 and rows 16-byte aligned
constexpr int LDA = BK + PAD, LDB = BN + PAD;

struct Shared {
    __half a[2][BM][LDA];
    __half b[2][BK][LDB];
    float patch[WARPS_M * WARPS_N][16 * 16];
};

__device__ __forceinline__ void cp_async16(void* shared, const void* global, bool inside) {
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(shared);
    const int bytes = inside ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::); }

// Stage the k-step starting at k0 into buffer `s`.
template <bool ALIGNED>
__device__ void load_tiles(Shared& sh, int s, const __half* A, const __half* B, int M, int N, int K, int m0, int n0,
                           int k0) {
    const int tid = threadIdx.x;
    if constexpr (ALIGNED) {
        for (int c = tid; c < BM * BK / 8; c += THREADS) {  // A: 128 rows x 4 chunks of 8 halves
            const int r = c / (BK / 8), col = (c % (BK / 8)) * 8;
            const bool inside = m0 + r < M && k0 + col < K;  // K % 8 == 0: a chunk is wholly in or out
            const __half* src = inside ? A + (size_t)(m0 + r) * K + k0 + col : A;
            cp_async16(&sh.a[s][r][col], src, inside);
        }
        for (int c = tid; c < BK * BN / 8; c += THREADS) {  // B: 32 rows x 16 chunks
            const int r = c / (BN / 8), col = (c % (BN / 8)) * 8;
            const bool inside = k0 + r < K && n0 + col < N;  // N % 8 == 0
            const __half* src = inside ? B + (size_t)(k0 + r) * N + n0 + col : B;
            cp_async16(&sh.b[s][r][col], src, inside);
        }
    } else {
        const __half zero = __float2half(0.0f);
        for (int e = tid; e < BM * BK; e += THREADS) {
            const int r = e / BK, col = e % BK;
            sh.a[s][r][col] = m0 + r < M && k0 + col < K ? A[(size_t)(m0 + r) * K + k0 + col] : zero;
        }
        for (int e = tid; e < BK * BN; e += THREADS) {
            const int r = e / BN, col = e % BN;
            sh.b[s][r][col] = k0 + r < K && n0 + col < N ? B[(size_t)(k0 + r) * N + n0 + col] : zero;
        }
    }
}

template <bool ALIGNED>
__global__ void __launch_bounds__(THREADS) gemm_wmma(const __half* __restrict__ A, const __half* __restrict__ B,
                                                     float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(128) Shared sh;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
    for (int i = 0; i < FM; ++i)
        for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    const int steps = (K + BK - 1) / BK;
    load_tiles<ALIGNED>(sh, 0, A, B, M, N, K, m0, n0, 0);
    cp_async_wait_all();
    __syncthreads();
    for (int t = 0; t < steps; ++t) {
        const int s = t & 1;
        if (t + 1 < steps) load_tiles<ALIGNED>(sh, s ^ 1, A, B, M, N, K, m0, n0, (t + 1) * BK);  // in flight
        for (int kk = 0; kk < BK; kk += 16) {
            wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> a[FM];
            wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> b[FN];
            for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], &sh.a[s][wm * WM + i * 16][kk], LDA);
            for (int j = 0; j < FN; ++j) wmma::load_matrix_sync(b[j], &sh.b[s][kk][wn * WN + j * 16], LDB);
            for (int i = 0; i < FM; ++i)
                for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
        }
        cp_async_wait_all();  // the next buffer has landed ...
        __syncthreads();      // ... and no warp still reads this one before it is refilled
    }

    float* patch = sh.patch[warp];
    for (int i = 0; i < FM; ++i)
        for (int j = 0; j < FN; ++j) {
            wmma::store_matrix_sync(patch, acc[i][j], 16, wmma::mem_row_major);
            __syncwarp();
            const int row0 = m0 + wm * WM + i * 16, col0 = n0 + wn * WN + j * 16;
            for (int e = lane; e < 256; e += 32) {
                const int r = row0 + e / 16, c = col0 + e % 16;
                if (r < M && c < N) C[(size_t)r * N + c] = patch[e];
            }
            __syncwarp();
        }
}

}  // namespace

void solve(const __half* A, const __half* B, float* C, int M, int N, int K) {
    const dim3 blocks((N + BN - 1) / BN, (M + BM - 1) / BM);
    const bool aligned = K % 8 == 0 && N % 8 == 0 && (uintptr_t)A % 16 == 0 && (uintptr_t)B % 16 == 0;
    if (aligned)
        gemm_wmma<true><<<blocks, THREADS>>>(A, B, C, M, N, K);
    else
        gemm_wmma<false><<<blocks, THREADS>>>(A, B, C, M, N, K);
}
