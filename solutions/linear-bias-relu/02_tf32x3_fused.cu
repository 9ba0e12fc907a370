// Rung 2 -- 3xTF32 tensor-core GEMM with the bias and ReLU fused into the epilogue.
//
// Over rung 1: the matmul problem's top rung (solutions/matmul/04_tf32x3_mma.cu):
// 128x128x32 block tiles in a 3-stage cp.async ring of padded shared memory,
// mma.sync m16n8k8 TF32 tensor cores kept float32-accurate by 3xTF32 (each operand
// split as big = tf32(x), small = tf32(x - big); a*b ~= a_small*b_big +
// a_big*b_small + a_big*b_big), every 16-deep piece of K summed from zero on the
// tensor cores and added to the FP32 accumulator with a round-to-nearest FADD.
// Two changes: W is N x K (nn.Linear's layout), so its tiles are stored [BN][BK]
// with k contiguous and loaded exactly like X's; and the epilogue adds b[col] and
// applies the ReLU to the accumulators in registers before the one store of Y, so
// the bias and activation cost no extra pass over memory.

#include <cuda_runtime.h>
#include <cstdint>

// ---- tile configuration ----
constexpr int BM = 128;                 // block tile rows
constexpr int BN = 128;                 // block tile cols
constexpr int BK = 32;                  // block tile depth
constexpr int STAGES = 3;               // cp.async pipeline depth
constexpr int WARPS_M = 2, WARPS_N = 4; // 8 warps
constexpr int THREADS = 32 * WARPS_M * WARPS_N;  // 256
constexpr int WM = BM / WARPS_M;        // 64: warp tile rows
constexpr int WN = BN / WARPS_N;        // 32: warp tile cols
constexpr int MMA_M = 16, MMA_N = 8, MMA_K = 8;
constexpr int M_TILES = WM / MMA_M;     // 4 mma tiles along M per warp
constexpr int N_TILES = WN / MMA_N;     // 4 mma tiles along N per warp
constexpr int K_GROUP = 2;              // mma k-steps summed per fresh fragment
constexpr int GROUP_M = 8;              // block rasterisation: 8 row-tiles per group (L2 reuse)

// Shared memory: X tile stored [BM][BK] and W tile [BN][BK], both k contiguous.
// Padding: row stride 36 -> fragment reads of either hit bank (4*g + t), all distinct;
// a multiple of 4 floats, so 16-byte cp.async stays aligned.
constexpr int A_STRIDE = BK + 4;
constexpr int B_STRIDE = BK + 4;
constexpr int A_STAGE = BM * A_STRIDE;  // floats per stage
constexpr int B_STAGE = BN * B_STRIDE;
constexpr int SMEM_BYTES = STAGES * (A_STAGE + B_STAGE) * (int)sizeof(float);  // 110592

// ---- PTX wrappers ----
__device__ __forceinline__ void cp_async16(float* smem, const float* gmem, bool valid) {
    // Copies 16 bytes; with src-size 0 nothing is read and the 16 bytes are zero-filled.
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n"
                 :: "r"(s), "l"(gmem), "r"(valid ? 16 : 0));
}
__device__ __forceinline__ void cp_async4(float* smem, const float* gmem, bool valid) {
    uint32_t s = (uint32_t)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n"
                 :: "r"(s), "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }

// Split x into big + small, both TF32 (low 13 mantissa bits zero).
// big: round to nearest, ties away -- the same result as cvt.rna.tf32.f32, but
//      two integer ops (the kernel ran ~15% faster than with cvt).
// small: x - big is exact in FP32 and at most half a TF32 ulp of x; it is
//      truncated to TF32, losing < 2^-22 |x| (nothing when x has <= 23
//      significant bits, as inputs uniform in [-1, 1) do).
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

// ---- global -> shared copy of one BMxBK tile of X and one BNxBK tile of W ----
// Both tiles are rows of k: each thread copies 4-float chunks (row tid/8 + 32i,
// k (tid%8)*4), i = 0..3, of each. VEC means K % 4 == 0 and X, W are 16-byte
// aligned, so a chunk is entirely in range or entirely out and one 16-byte
// cp.async moves it; otherwise each float is copied and checked on its own.
// 32-bit offsets suffice (16384*8192 < 2^31) and keep register use low.
constexpr int CHUNKS = BM * BK / 4 / THREADS;      // 4
constexpr int ROWS_PER_PASS = THREADS / (BK / 4);  // 32
static_assert(BM == BN && CHUNKS * 4 * THREADS == BM * BK, "loader mapping");

template <bool VEC>
__device__ __forceinline__ void copy_chunk(float* dst, const float* base, int off, bool row_ok,
                                           int col, int cols) {
    if (VEC) {
        const bool ok = row_ok && col < cols;
        cp_async16(dst, ok ? base + off : base, ok);
    } else {
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const bool ok = row_ok && col + j < cols;
            cp_async4(dst + j, ok ? base + off + j : base, ok);
        }
    }
}

template <bool VEC>
__device__ __forceinline__ void load_tile(float* Xs, float* Ws, const float* X, const float* W,
                                          int M, int N, int K, int m0, int n0, int k0, int tid) {
    const int r0 = tid / (BK / 4), c = (tid % (BK / 4)) * 4;
    const int gk = k0 + c;
#pragma unroll
    for (int i = 0; i < CHUNKS; ++i) {
        const int r = r0 + i * ROWS_PER_PASS;
        const int gm = m0 + r, gn = n0 + r;
        copy_chunk<VEC>(Xs + r * A_STRIDE + c, X, gm * K + gk, gm < M, gk, K);
        copy_chunk<VEC>(Ws + r * B_STRIDE + c, W, gn * K + gk, gn < N, gk, K);
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS, 1)
linear_tf32x3(const float* __restrict__ X, const float* __restrict__ W, const float* __restrict__ b,
              float* __restrict__ Y, int M, int N, int K, bool vec_y) {
    extern __shared__ __align__(16) float smem[];
    float* Xs_base = smem;                       // STAGES x [BM][A_STRIDE]
    float* Ws_base = smem + STAGES * A_STAGE;    // STAGES x [BN][B_STRIDE]

    // Grouped rasterisation: consecutive blocks sweep GROUP_M row-tiles x all
    // column-tiles, so the X and W panels they share stay in L2.
    const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group;
    const int first_m = group * GROUP_M;
    const int group_rows = min(tiles_m - first_m, GROUP_M);
    const int in_group = blockIdx.x % per_group;
    const int m0 = (first_m + in_group % group_rows) * BM;
    const int n0 = (in_group / group_rows) * BN;

    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int wm0 = (warp / WARPS_N) * WM;  // warp tile origin inside the block tile
    const int wn0 = (warp % WARPS_N) * WN;
    const int g = lane / 4, t = lane % 4;   // mma fragment coordinates

    float acc[M_TILES][N_TILES][4] = {};
    const int k_tiles = (K + BK - 1) / BK;

    // Prologue: start loading the first STAGES-1 tiles (one commit group each).
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < k_tiles)
            load_tile<VEC>(Xs_base + s * A_STAGE, Ws_base + s * B_STAGE, X, W, M, N, K, m0, n0, s * BK, tid);
        cp_async_commit();
    }

    for (int kt = 0; kt < k_tiles; ++kt) {
        // Groups committed so far: STAGES-1+kt. Leaving STAGES-2 in flight means
        // tile kt has landed; the barrier makes it visible to all warps and
        // guarantees everyone is done with tile kt-1, whose slot we refill now.
        cp_async_wait<STAGES - 2>();
        __syncthreads();
        const int next = kt + STAGES - 1;
        if (next < k_tiles)
            load_tile<VEC>(Xs_base + (next % STAGES) * A_STAGE, Ws_base + (next % STAGES) * B_STAGE, X, W,
                           M, N, K, m0, n0, next * BK, tid);
        cp_async_commit();  // always commit (maybe empty) to keep the group count regular

        const float* Xs = Xs_base + (kt % STAGES) * A_STAGE + wm0 * A_STRIDE;
        const float* Ws = Ws_base + (kt % STAGES) * B_STAGE + wn0 * B_STRIDE;

        // The BK slice is processed in halves of K_GROUP mma k-steps, each summed
        // from zero on the tensor cores (big*big in one chain, the two small cross
        // terms in another) and then added to the FP32 accumulator with
        // round-to-nearest FADDs, as in the matmul rung.
#pragma unroll 1
        for (int k0 = 0; k0 < BK; k0 += K_GROUP * MMA_K) {
            // W fragments (b[0] = (k=t, col=g), b[1] = (k=t+4, col=g)), split once
            // and reused by all M tiles of the warp.
            uint32_t b_big[K_GROUP][N_TILES][2], b_small[K_GROUP][N_TILES][2];
#pragma unroll
            for (int s = 0; s < K_GROUP; ++s)
#pragma unroll
                for (int j = 0; j < N_TILES; ++j) {
                    const float* wp = Ws + (j * MMA_N + g) * B_STRIDE + k0 + s * MMA_K + t;
                    split_tf32(wp[0], b_big[s][j][0], b_small[s][j][0]);  // (k=t,   col g)
                    split_tf32(wp[4], b_big[s][j][1], b_small[s][j][1]);  // (k=t+4, col g)
                }
#pragma unroll
            for (int i = 0; i < M_TILES; ++i) {
                uint32_t a_big[K_GROUP][4], a_small[K_GROUP][4];
#pragma unroll
                for (int s = 0; s < K_GROUP; ++s) {
                    const float* ap = Xs + (i * MMA_M + g) * A_STRIDE + k0 + s * MMA_K + t;
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

    // Epilogue: each thread holds, per mma tile, rows g and g+8, columns 2t and 2t+1.
    // The bias of those columns is loaded once; y = max(acc + b, 0) goes straight to Y.
    float bias[N_TILES][2];
#pragma unroll
    for (int j = 0; j < N_TILES; ++j) {
        const int col = n0 + wn0 + j * MMA_N + 2 * t;
        bias[j][0] = col < N ? b[col] : 0.0f;
        bias[j][1] = col + 1 < N ? b[col + 1] : 0.0f;
    }
#pragma unroll
    for (int i = 0; i < M_TILES; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int row = m0 + wm0 + i * MMA_M + g + half * 8;
            if (row >= M) continue;
            float* y_row = Y + (size_t)row * N;
#pragma unroll
            for (int j = 0; j < N_TILES; ++j) {
                const int col = n0 + wn0 + j * MMA_N + 2 * t;
                const float v0 = fmaxf(acc[i][j][2 * half] + bias[j][0], 0.0f);
                const float v1 = fmaxf(acc[i][j][2 * half + 1] + bias[j][1], 0.0f);
                if (vec_y) {  // N even and Y 8-byte aligned: col < N implies col+1 < N
                    if (col < N) *reinterpret_cast<float2*>(y_row + col) = make_float2(v0, v1);
                } else {
                    if (col < N) y_row[col] = v0;
                    if (col + 1 < N) y_row[col + 1] = v1;
                }
            }
        }
    }
}

template <bool VEC>
static void launch(const float* X, const float* W, const float* b, float* Y, int M, int N, int K, bool vec_y) {
    auto kernel = linear_tf32x3<VEC>;
    cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    const int tiles = ((M + BM - 1) / BM) * ((N + BN - 1) / BN);
    kernel<<<tiles, THREADS, SMEM_BYTES>>>(X, W, b, Y, M, N, K, vec_y);
}

static bool aligned(const void* p, int bytes) { return (reinterpret_cast<uintptr_t>(p) % bytes) == 0; }

void solve(const float* X, const float* W, const float* b, float* Y, int M, int N, int K) {
    const bool vec = (K % 4 == 0) && aligned(X, 16) && aligned(W, 16);
    const bool vec_y = (N % 2 == 0) && aligned(Y, 8);
    if (vec)
        launch<true>(X, W, b, Y, M, N, K, vec_y);
    else
        launch<false>(X, W, b, Y, M, N, K, vec_y);
}
