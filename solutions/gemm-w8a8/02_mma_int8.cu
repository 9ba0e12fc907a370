// Rung 2 -- integer tensor cores: mma.sync.m16n8k32 s8 x s8 + s32, tiles staged by cp.async, double-buffered;
// the quantization a kernel of its own, vectorised.
//
// Over rung 1: the int32 dot products move to the tensor cores, which multiply int8 at twice the FP16 rate
// (about 1980 dense TOPS on an H100). Both operands are K-contiguous -- q is M x K, W is N x K -- which is
// exactly mma's "row.col" form: A row-major, B column-major. A block computes a 128 x 128 tile of Y with 8 warps
// in a 2 x 4 grid, each warp 64 x 32 = 4 x 4 mma tiles of m16n8 with 64 int32 accumulators per thread. Per step
// of 64 k the block stages q[128 x 64] and W[128 x 64] in shared memory (rows padded to 80 bytes: the 8 rows a
// fragment load touches then fall in 8 different groups of 4 banks), while cp.async fetches the next step.
//
// Fragments (PTX ISA, mma.m16n8k32 for 8-bit types), g = lane / 4, t = lane % 4: A's 4 registers are the 4
// bytes at (row g, k 4t..4t+3), (g + 8, 4t..), (g, 16 + 4t..), (g + 8, 16 + 4t..); B's 2 registers the 4 bytes
// of W's row (column of B) g at k 4t.. and 16 + 4t..; the accumulators c0, c1 are (g, 2t + {0,1}) and c2, c3
// the same 8 rows down. Each register is one aligned 32-bit shared-memory load.
//
// Whole 16-byte chunks are copied by cp.async when K is a multiple of 16 (and the pointers 16-byte aligned),
// zero-filled past the edges; otherwise the tiles are loaded byte by byte with the same zero fill. k past K
// contributes 0 * 0. The epilogue writes (s_i * sw_j) * float(acc) from the accumulators, bounds-checked.
// Left on the table: a 64-row tile for decode shapes (M = 16 leaves 7/8 of each mma idle and only N / 128
// blocks), wgmma with TMA (s8 wgmma needs both operands K-major, which they are), a persistent grid.
#include <cstdint>
#include <cuda_runtime.h>

namespace {

constexpr int QUANT_THREADS = 256;
constexpr int BM = 128, BN = 128, BK = 64;
constexpr int WARPS_M = 2, WARPS_N = 4, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // 64 x 32 per warp
constexpr int MI = WM / 16, NI = WN / 8;             // 4 x 4 mma tiles
constexpr int LDS = BK + 16;                         // 80-byte rows: 16-byte aligned, fragment loads conflict-free

struct Shared {
    int8_t a[2][BM][LDS];
    int8_t b[2][BN][LDS];
};

// s_i = max|x| / 127 and q = rint(x / s) (IEEE division, half to even), a block per row; float4 loads when the
// row allows them.
__global__ void quantize_rows(const float* __restrict__ X, int8_t* __restrict__ q, float* __restrict__ s, int K) {
    __shared__ float partial[QUANT_THREADS / 32];
    const float* x = X + (size_t)blockIdx.x * K;
    const bool vec = K % 4 == 0 && reinterpret_cast<uintptr_t>(X) % 16 == 0;
    float amax = 0.0f;
    if (vec) {
        for (int k = 4 * threadIdx.x; k < K; k += 4 * blockDim.x) {
            const float4 v = *reinterpret_cast<const float4*>(x + k);
            amax = fmaxf(amax, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
        }
    } else {
        for (int k = threadIdx.x; k < K; k += blockDim.x) amax = fmaxf(amax, fabsf(x[k]));
    }
    for (int offset = 16; offset > 0; offset /= 2) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, offset));
    if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = partial[0];
    for (int w = 1; w < QUANT_THREADS / 32; ++w) amax = fmaxf(amax, partial[w]);
    const float scale = amax / 127.0f;
    int8_t* row = q + (size_t)blockIdx.x * K;
    for (int k = threadIdx.x; k < K; k += blockDim.x)
        row[k] = scale > 0.0f ? (int8_t)fminf(127.0f, fmaxf(-127.0f, rintf(x[k] / scale))) : 0;
    if (threadIdx.x == 0) s[blockIdx.x] = scale;
}

__device__ __forceinline__ void cp_async16(void* shared, const void* global, bool inside) {
    const uint32_t address = (uint32_t)__cvta_generic_to_shared(shared);
    const int bytes = inside ? 16 : 0;  // 0: nothing is read, the 16 bytes are zero-filled
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address), "l"(global), "r"(bytes));
}

__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::); }

// Stage rows [r0, r0 + 128) of the K-contiguous matrix `src` (rows x K), k from k0, into tile[128][LDS].
template <bool ALIGNED>
__device__ void load_tile(int8_t (*tile)[LDS], const int8_t* src, int rows, int K, int r0, int k0) {
    if constexpr (ALIGNED) {
        for (int c = threadIdx.x; c < 128 * BK / 16; c += THREADS) {
            const int r = c / (BK / 16), col = (c % (BK / 16)) * 16;
            const bool inside = r0 + r < rows && k0 + col < K;  // K % 16 == 0: a chunk is wholly in or out
            cp_async16(&tile[r][col], inside ? src + (size_t)(r0 + r) * K + k0 + col : src, inside);
        }
    } else {
        for (int e = threadIdx.x; e < 128 * BK; e += THREADS) {
            const int r = e / BK, col = e % BK;
            tile[r][col] = r0 + r < rows && k0 + col < K ? src[(size_t)(r0 + r) * K + k0 + col] : (int8_t)0;
        }
    }
}

__device__ __forceinline__ uint32_t word(const int8_t* p) { return *reinterpret_cast<const uint32_t*>(p); }

__device__ __forceinline__ void mma_s8(int (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

template <bool ALIGNED>
__global__ void __launch_bounds__(THREADS) gemm_mma(const int8_t* __restrict__ q, const float* __restrict__ s,
                                                    const int8_t* __restrict__ W, const float* __restrict__ sw,
                                                    float* __restrict__ Y, int M, int N, int K) {
    __shared__ __align__(128) Shared sh;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    int acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0;

    const int steps = (K + BK - 1) / BK;
    load_tile<ALIGNED>(sh.a[0], q, M, K, m0, 0);
    load_tile<ALIGNED>(sh.b[0], W, N, K, n0, 0);
    cp_async_wait_all();
    __syncthreads();
    for (int step = 0; step < steps; ++step) {
        const int cur = step & 1;
        if (step + 1 < steps) {  // in flight while this step multiplies
            load_tile<ALIGNED>(sh.a[cur ^ 1], q, M, K, m0, (step + 1) * BK);
            load_tile<ALIGNED>(sh.b[cur ^ 1], W, N, K, n0, (step + 1) * BK);
        }
#pragma unroll
        for (int kk = 0; kk < BK; kk += 32) {
            uint32_t a[MI][4], b[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const int r = wm * WM + i * 16 + g;
                a[i][0] = word(&sh.a[cur][r][kk + 4 * t]);
                a[i][1] = word(&sh.a[cur][r + 8][kk + 4 * t]);
                a[i][2] = word(&sh.a[cur][r][kk + 16 + 4 * t]);
                a[i][3] = word(&sh.a[cur][r + 8][kk + 16 + 4 * t]);
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const int c = wn * WN + j * 8 + g;
                b[j][0] = word(&sh.b[cur][c][kk + 4 * t]);
                b[j][1] = word(&sh.b[cur][c][kk + 16 + 4 * t]);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) mma_s8(acc[i][j], a[i], b[j]);
        }
        cp_async_wait_all();  // the next buffer has landed ...
        __syncthreads();      // ... and no warp still reads this one before it is refilled
    }

#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = m0 + wm * WM + i * 16 + g + 8 * half;
            if (r >= M) continue;
            const float row_scale = s[r];
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int c = n0 + wn * WN + j * 8 + 2 * t + e;
                    if (c < N) Y[(size_t)r * N + c] = (row_scale * sw[c]) * (float)acc[i][j][2 * half + e];
                }
        }
}

// Scratch for q and s, kept between calls and grown when a call needs more.
int8_t* scratch(size_t bytes, float** s, int rows) {
    static int8_t* q = nullptr;
    static float* scales = nullptr;
    static size_t q_bytes = 0;
    static int scale_rows = 0;
    if (bytes > q_bytes) cudaFree(q), cudaMalloc(&q, bytes), q_bytes = bytes;
    if (rows > scale_rows) cudaFree(scales), cudaMalloc(&scales, rows * sizeof(float)), scale_rows = rows;
    *s = scales;
    return q;
}

}  // namespace

void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    float* s = nullptr;
    int8_t* q = scratch((size_t)M * K, &s, M);
    quantize_rows<<<M, QUANT_THREADS>>>(X, q, s, K);
    const dim3 blocks((N + BN - 1) / BN, (M + BM - 1) / BM);
    const bool aligned = K % 16 == 0 && reinterpret_cast<uintptr_t>(W) % 16 == 0;  // q: cudaMalloc, 256-aligned
    if (aligned)
        gemm_mma<true><<<blocks, THREADS>>>(q, s, W, sw, Y, M, N, K);
    else
        gemm_mma<false><<<blocks, THREADS>>>(q, s, W, sw, Y, M, N, K);
}
