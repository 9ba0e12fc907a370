// Rung 2 -- implicit GEMM on 3xTF32 tensor cores: the convolution as a tiled matmul.
//
// Over rung 1: the convolution is the matmul  weight (K x L) . patches (L x NPQ),
// L = C*R*S, where column (n, p, q) of `patches` is the input patch under output
// pixel (p, q) of image n: patches[(c, r, s)][(n, p, q)] = input[n][c][p+r][q+s].
// The patch matrix (R*S times the input) is never built: the tile loader gathers
// it straight from the input into shared memory (im2col on the fly). A pixel's
// base address is decoded once per thread, and a row's offset c*H*W + r*W + s is
// read from a small table made by a first kernel, so no division runs in the main
// loop. The rest is the matmul problem's top rung (solutions/matmul/04_tf32x3_mma.cu):
// block tiles of 128 pixels x 128 (or 64) filters x 32 of L in a 3-stage cp.async
// ring of padded shared memory, mma.sync m16n8k8 TF32 kept float32-accurate by
// 3xTF32 (a*b ~= a_small*b_big + a_big*b_small + a_big*b_big), each 16-deep piece
// of L summed from zero on the tensor cores and added to FP32 accumulators.
// Consecutive pixels are consecutive addresses, so the gather coalesces.

#include <cuda_runtime.h>
#include <cstdint>

// ---- tile configuration (BM, the filters per block, is a template parameter: 128 or 64) ----
constexpr int BN = 128;                 // block tile: pixels
constexpr int BK = 32;                  // block tile depth (of L = C*R*S)
constexpr int STAGES = 3;               // cp.async pipeline depth
constexpr int THREADS = 256;            // 8 warps
constexpr int WM = 64;                  // warp tile rows (filters)
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 8;
constexpr int M_TILES = WM / MMA_M;     // 4 mma tiles along the filters per warp
constexpr int K_GROUP = 2;              // mma k-steps summed per fresh fragment
constexpr int GROUP_M = 8;              // block rasterisation: 8 filter tiles per group (L2 reuse)

// Shared memory: weight tile [BM][BK] (L contiguous), patch tile [BK][BN] (pixels contiguous).
// Padding: row stride 36 -> weight fragment reads hit bank (4*g + t), all distinct;
//          row stride 136 -> patch fragment reads hit bank (8*t + g), all distinct.
constexpr int A_STRIDE = BK + 4;
constexpr int B_STRIDE = BN + 8;
constexpr int B_STAGE = BK * B_STRIDE;

template <int BM>
struct Config {
    static constexpr int WARPS_M = BM / WM;                  // 2 or 1
    static constexpr int WARPS_N = THREADS / 32 / WARPS_M;   // 4 or 8
    static constexpr int WN = BN / WARPS_N;                  // 32 or 16: warp tile cols (pixels)
    static constexpr int N_TILES = WN / MMA_N;               // 4 or 2
    static constexpr int A_STAGE = BM * A_STRIDE;
    static constexpr int A_CHUNKS = BM * BK / 4 / THREADS;   // 4 or 2 chunks of 4 floats per thread
    static constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);
};
constexpr int A_ROWS_PER_PASS = THREADS / (BK / 4);  // 32
constexpr int B_COLS = 4;                            // pixels per thread in the patch loader
constexpr int B_ROWS_PER_PASS = THREADS / 32;        // 8: a warp loads 32 x 4 pixels of one row
constexpr int B_ROWS = BK / B_ROWS_PER_PASS;         // 4 rows per thread per tile

// ---- PTX wrappers ----
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool valid) {
    // Copies 16 bytes; with src-size 0 nothing is read and the 16 bytes are zero-filled.
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// x = big + small, both TF32 (low 13 mantissa bits zero); big rounded to nearest, small truncated
// (loses < 2^-22 |x|): as in the matmul rung.
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    big = (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
    small = __float_as_uint(x - __uint_as_float(big)) & 0xffffe000u;
}

// d += a * b for one m16n8k8 tile. Fragment layout (g = lane/4, t = lane%4):
//   a[0]=(g,t) a[1]=(g+8,t) a[2]=(g,t+4) a[3]=(g+8,t+4)   [row, k]
//   b[0]=(t,g) b[1]=(t+4,g)                               [k, col]
//   d[0]=(g,2t) d[1]=(g,2t+1) d[2]=(g+8,2t) d[3]=(g+8,2t+1) [row, col]
__device__ __forceinline__ void mma_tf32(float* d, const uint32_t* a, const uint32_t* b) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// offsets[l] = c*H*W + r*W + s for l = (c*R + r)*S + s: where row l of the patch matrix starts,
// relative to a pixel's base address.
__global__ void row_offsets(int* __restrict__ offsets, int L, int RS, int S, int HW, int W) {
    const int l = blockIdx.x * blockDim.x + threadIdx.x;
    if (l >= L) return;
    const int c = l / RS, rs = l - c * RS, r = rs / S, s = rs - r * S;
    offsets[l] = c * HW + r * W + s;
}

// ---- global -> shared copy of one BMxBK weight tile and one BKxBN patch tile ----
// Weight: chunks of 4 floats (row tid/8 + 32i, l (tid%8)*4), as the matmul rung loads A; VEC_A means
// L % 4 == 0 and weight 16-byte aligned, so one 16-byte cp.async moves a chunk. Patches: thread
// (warp w, lane) loads rows w + 8i, pixels lane + 32j of the tile (a warp: 32 consecutive pixels of
// one row, coalesced), each float gathered from input + pixel base + row offset.
template <int BM, bool VEC_A>
__device__ __forceinline__ void load_tile(float* As, float* Bs, const float* __restrict__ weight,
                                          const float* __restrict__ input, const int* __restrict__ offsets,
                                          const int (&pix_base)[B_COLS], int K, int L, int m0, int k0, int tid) {
    const int a_r = tid / (BK / 4), a_c = (tid % (BK / 4)) * 4;
#pragma unroll
    for (int i = 0; i < Config<BM>::A_CHUNKS; ++i) {
        const int r = a_r + i * A_ROWS_PER_PASS;
        const int gm = m0 + r, gk = k0 + a_c;
        const float* src = weight + (size_t)gm * L + gk;
        float* dst = As + r * A_STRIDE + a_c;
        if (VEC_A) {
            const bool ok = gm < K && gk < L;
            cp_async16(dst, ok ? src : weight, ok);
        } else {
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const bool ok = gm < K && gk + j < L;
                cp_async4(dst + j, ok ? src + j : weight, ok);
            }
        }
    }
    const int b_r = tid / 32, b_c = tid % 32;
#pragma unroll
    for (int i = 0; i < B_ROWS; ++i) {
        const int r = b_r + i * B_ROWS_PER_PASS;
        const int l = k0 + r;
        const int off = l < L ? __ldg(offsets + l) : 0;  // the same for the whole warp: one broadcast load
#pragma unroll
        for (int j = 0; j < B_COLS; ++j) {
            const bool ok = l < L && pix_base[j] >= 0;
            cp_async4(Bs + r * B_STRIDE + b_c + 32 * j, ok ? input + pix_base[j] + off : input, ok);
        }
    }
}

template <int BM, bool VEC_A>
__global__ void __launch_bounds__(THREADS, 1)
conv_implicit_gemm(const float* __restrict__ input, const float* __restrict__ weight, float* __restrict__ output,
                   const int* __restrict__ offsets, int N, int C, int H, int W, int K, int P, int Q, int L) {
    using Cfg = Config<BM>;
    constexpr int N_TILES = Cfg::N_TILES;
    extern __shared__ __align__(16) float smem[];
    float* As_base = smem;                           // STAGES x [BM][A_STRIDE]
    float* Bs_base = smem + STAGES * Cfg::A_STAGE;   // STAGES x [BK][B_STRIDE]

    const int PQ = P * Q, NPQ = N * PQ;
    // Grouped rasterisation: consecutive blocks take the filter tiles of one pixel tile, so the
    // patch tile they gather stays in L2 (the weights, a few MB, stay there anyway).
    const int tiles_m = (K + BM - 1) / BM, tiles_n = (NPQ + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group;
    const int first_m = group * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = blockIdx.x % per_group;
    const int m0 = (first_m + in_group % group_rows) * BM;  // first filter
    const int n0 = (in_group / group_rows) * BN;            // first pixel

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm0 = (warp / Cfg::WARPS_N) * WM;  // warp tile origin inside the block tile
    const int wn0 = (warp % Cfg::WARPS_N) * Cfg::WN;
    const int g = lane / 4, t = lane % 4;        // mma fragment coordinates

    // The loader's pixels (n0 + lane + 32j): base address of input[n][0][p][q], -1 past the end.
    int pix_base[B_COLS];
#pragma unroll
    for (int j = 0; j < B_COLS; ++j) {
        const int pix = n0 + lane + 32 * j;
        const int n = pix / PQ, pq = pix - n * PQ, p = pq / Q, q = pq - p * Q;
        pix_base[j] = pix < NPQ ? (n * C * H + p) * W + q : -1;
    }

    float acc[M_TILES][N_TILES][4] = {};
    const int k_tiles = (L + BK - 1) / BK;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles)
            load_tile<BM, VEC_A>(As_base + s * Cfg::A_STAGE, Bs_base + s * B_STAGE, weight, input, offsets,
                                 pix_base, K, L, m0, s * BK, tid);
        cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        // Tile kt has landed once at most STAGES-2 groups are in flight; the barrier also says every
        // warp is done with tile kt-1, whose slot is refilled now.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int next = kt + STAGES - 1;
        if (next < k_tiles)
            load_tile<BM, VEC_A>(As_base + (next % STAGES) * Cfg::A_STAGE, Bs_base + (next % STAGES) * B_STAGE,
                                 weight, input, offsets, pix_base, K, L, m0, next * BK, tid);
        cp_async_commit();  // always commit (maybe empty) to keep the group count regular

        const float* As = As_base + (kt % STAGES) * Cfg::A_STAGE + wm0 * A_STRIDE;
        const float* Bs = Bs_base + (kt % STAGES) * B_STAGE + wn0;

#pragma unroll 1
        for (int k0 = 0; k0 < BK; k0 += K_GROUP * MMA_K) {
            uint32_t b_big[K_GROUP][N_TILES][2], b_small[K_GROUP][N_TILES][2];
#pragma unroll
            for (int s = 0; s < K_GROUP; ++s)
#pragma unroll
                for (int j = 0; j < N_TILES; ++j) {
                    const float* bp = Bs + (k0 + s * MMA_K + t) * B_STRIDE + j * MMA_N + g;
                    split_tf32(bp[0], b_big[s][j][0], b_small[s][j][0]);             // (k=t,   col g)
                    split_tf32(bp[4 * B_STRIDE], b_big[s][j][1], b_small[s][j][1]);  // (k=t+4, col g)
                }
#pragma unroll
            for (int i = 0; i < M_TILES; ++i) {
                uint32_t a_big[K_GROUP][4], a_small[K_GROUP][4];
#pragma unroll
                for (int s = 0; s < K_GROUP; ++s) {
                    const float* ap = As + (i * MMA_M + g) * A_STRIDE + k0 + s * MMA_K + t;
                    split_tf32(ap[0], a_big[s][0], a_small[s][0]);                 // (g,   k=t)
                    split_tf32(ap[8 * A_STRIDE], a_big[s][1], a_small[s][1]);      // (g+8, k=t)
                    split_tf32(ap[4], a_big[s][2], a_small[s][2]);                 // (g,   k=t+4)
                    split_tf32(ap[8 * A_STRIDE + 4], a_big[s][3], a_small[s][3]);  // (g+8, k=t+4)
                }
#pragma unroll
                for (int j = 0; j < N_TILES; ++j) {
                    float d_big[4] = {0.f, 0.f, 0.f, 0.f}, d_small[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
                    for (int s = 0; s < K_GROUP; ++s) {
                        mma_tf32(d_small, a_small[s], b_big[s][j]);
                        mma_tf32(d_small, a_big[s], b_small[s][j]);
                        mma_tf32(d_big, a_big[s], b_big[s][j]);
                    }
#pragma unroll
                    for (int q = 0; q < 4; ++q) acc[i][j][q] += d_big[q] + d_small[q];
                }
            }
        }
    }

    // Epilogue: per mma tile, rows (filters) g and g+8, columns (pixels) 2t and 2t+1. A pixel's
    // place in the output is n*K*PQ + pq, plus k*PQ for filter k; two adjacent pixels may belong to
    // different images, so each is stored on its own.
    int out_base[N_TILES][2];
#pragma unroll
    for (int j = 0; j < N_TILES; ++j)
#pragma unroll
        for (int e = 0; e < 2; ++e) {
            const int pix = n0 + wn0 + j * MMA_N + 2 * t + e;
            const int n = pix / PQ;
            out_base[j][e] = pix < NPQ ? n * K * PQ + (pix - n * PQ) : -1;
        }
#pragma unroll
    for (int i = 0; i < M_TILES; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int k = m0 + wm0 + i * MMA_M + g + half * 8;
            if (k >= K) continue;
#pragma unroll
            for (int j = 0; j < N_TILES; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e)
                    if (out_base[j][e] >= 0) output[out_base[j][e] + k * PQ] = acc[i][j][2 * half + e];
        }
}

// Scratch for the row-offset table: grown on demand, never shrunk (kept across calls; holds no results).
static int* g_offsets = nullptr;
static int g_offsets_len = 0;

template <int BM, bool VEC_A>
static void launch(const float* input, const float* weight, float* output, const int* offsets, int N, int C,
                   int H, int W, int K, int P, int Q, int L) {
    auto kernel = conv_implicit_gemm<BM, VEC_A>;
    constexpr int smem = Config<BM>::SMEM_BYTES;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    const long long pixels = (long long)N * P * Q;
    const int tiles = ((K + BM - 1) / BM) * (int)((pixels + BN - 1) / BN);
    kernel<<<tiles, THREADS, smem>>>(input, weight, output, offsets, N, C, H, W, K, P, Q, L);
}

void solve(const float* input, const float* weight, float* output, int N, int C, int H, int W, int K, int R,
           int S) {
    const int P = H - R + 1, Q = W - S + 1, L = C * R * S;
    if (L > g_offsets_len) {
        if (g_offsets) cudaFree(g_offsets);
        g_offsets = nullptr;
        g_offsets_len = 0;
        if (cudaMalloc(&g_offsets, (size_t)L * sizeof(int)) != cudaSuccess) return;
        g_offsets_len = L;
    }
    row_offsets<<<(L + 255) / 256, 256>>>(g_offsets, L, R * S, S, H * W, W);

    const bool vec_a = L % 4 == 0 && reinterpret_cast<uintptr_t>(weight) % 16 == 0;
    // Filters per block: 64 when there are few (a 128-row tile would be half padding), else 128.
    if (K <= 64) {
        if (vec_a) launch<64, true>(input, weight, output, g_offsets, N, C, H, W, K, P, Q, L);
        else       launch<64, false>(input, weight, output, g_offsets, N, C, H, W, K, P, Q, L);
    } else {
        if (vec_a) launch<128, true>(input, weight, output, g_offsets, N, C, H, W, K, P, Q, L);
        else       launch<128, false>(input, weight, output, g_offsets, N, C, H, W, K, P, Q, L);
    }
}
