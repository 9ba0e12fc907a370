// Rung 2 -- group the tokens on the device (a counting sort), gather their rows into expert order, and run
// every group's GEMM in one launch on Hopper's wgmma + TMA machinery.
//
// Rung 1 gives each token its own walk through its expert's weights, so a weight row is read once per token.
// Here the tokens of one expert share every weight tile:
//
//  1. count: one atomicAdd per token on its expert's counter.
//  2. plan (one block of 256 threads, E <= 256): an exclusive scan turns the counts into group offsets, and
//     another the groups' tile counts (ceil(count / 128)) into tile offsets; thread e then writes the list
//     entries of its group's row tiles (expert, first sorted row). Empty experts get no tiles. Nothing goes
//     back to the host: the GEMM is launched for the most tiles there can be, ceil(T / 128) + min(E, T), and
//     blocks past the real count exit at once.
//  3. scatter: each token takes the next slot of its group (an atomicAdd on a cursor) and writes its index
//     there; a gather kernel then copies the rows of X into that order (Xs), 16 bytes per thread. The order
//     within a group depends on the atomics' timing, but each output row is computed by the same
//     arithmetic wherever its token lands, so Y does not.
//  4. GEMM: gemm-fp16's rung 3 (TMA into 128-byte-swizzled tiles, a 4-stage mbarrier pipeline, one producer
//     and two consumer warpgroups on wgmma m64n256k16; read its header for the layouts), with both operands
//     K-major (tnsp-b = 0): a tile is rows row0..row0+127 of Xs and rows e*N + n0 .. +255 of W seen as one
//     (E*N) x K matrix. Rows past the group's end belong to the next group (or are TMA's zero fill), and
//     weight rows past N belong to the next expert: the epilogue stores only rows inside the group and
//     columns below N, each row to Y[order[row]]. A consumer whose 64 rows all lie past the group's end skips
//     its wgmmas (it still releases each stage), so a group's ragged last tile costs little tensor time.
//
// Sizes TMA cannot describe (K % 8: a global row stride must be a multiple of 16 bytes) and GPUs other than
// compute capability 9.0 go to rung 1's kernel, copied below: slow, correct for any routing.
#include <cuda.h>  // CUtensorMap and the cuTensorMapEncodeTiled prototype only: libcuda is not linked
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

// nvcc -arch=sm_90a also compiles a plain compute_90 pass, where wgmma, setmaxnreg and friends do not exist:
// there the fast kernel is an empty stub (solve() launches it only on compute capability 9.0, which runs the
// sm_90a code), and its helpers are left out.
#if !defined(__CUDA_ARCH__) || defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KJ_HAS_WGMMA 1
#endif

namespace {

// ------------------------------------------------------------------------------------------------ fast path
constexpr int TBM = 128, TBN = 256, TBK = 64;  // block tile of Y (128 sorted rows x 256 units) and k-step
constexpr int STAGES = 4;
constexpr int CONSUMERS = 2;                           // consumer warpgroups, 64 rows each
constexpr int TTHREADS = 128 * (CONSUMERS + 1);        // + the producer warpgroup
constexpr int X_TILE_BYTES = TBM * TBK * 2;            // 16 KiB: 128 rows of 64 k
constexpr int W_BOX_ROWS = 128;                        // a TMA box: 64 k x 128 weight rows, 16 KiB
constexpr int W_TILE_BYTES = TBN * TBK * 2;            // 32 KiB: two boxes
constexpr int STAGE_BYTES = X_TILE_BYTES + W_TILE_BYTES;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + 2 * STAGES * 8 + 1024;  // tiles, barriers, 1 KiB alignment slack

#ifdef KJ_HAS_WGMMA
constexpr int GROUP_M = 8;  // block order: 8 row-tiles side by side walk N together, so B tiles are reused in L2

__device__ __forceinline__ uint32_t smem_u32(const void* p) { return (uint32_t)__cvta_generic_to_shared(p); }

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}

// Spin until the barrier's phase with this parity has completed.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
    uint32_t done = 0;
    while (!done) {
        asm volatile(
            "{\n"
            ".reg .pred p;\n"
            "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
            "selp.u32 %0, 1, 0, p;\n"
            "}\n"
            : "=r"(done)
            : "r"(smem_u32(bar)), "r"(parity)
            : "memory");
    }
}

// A 2-D TMA load of the box at (c0 = innermost coordinate, c1) into shared memory; completes on `bar`.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::
            "r"(smem_u32(dst)),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_u32(bar))
        : "memory");
}

// A wgmma shared-memory matrix descriptor: start address, LBO and SBO in units of 16 bytes (bits 0-13,
// 16-29, 32-45), base offset 0 (bits 49-51: every atom is 1 KiB aligned), swizzle mode 1 = 128B (bits 62-63).
__device__ __forceinline__ uint64_t make_desc(uint32_t smem_addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
    uint64_t desc = 0;
    desc |= (uint64_t)((smem_addr & 0x3FFFF) >> 4);
    desc |= (uint64_t)((lbo_bytes >> 4) & 0x3FFF) << 16;
    desc |= (uint64_t)((sbo_bytes >> 4) & 0x3FFF) << 32;
    desc |= (uint64_t)1 << 62;
    return desc;
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// D[64x256] += A[64x16] * B[16x256], f16 inputs, f32 accumulators; A and B both K-major (tnsp-a 0, tnsp-b 0).
// Thread t of the warpgroup holds d[4j + {0,1}] = D[16(t/32) + (t%32)/4][8j + 2(t%4) + {0,1}] and
// d[4j + {2,3}] the same columns 8 rows further down, j = 0..31.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
    asm volatile(
        "{\n"
        ".reg .pred p;\n"
        "setp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16\n"
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21,\n"
        "%22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41,\n"
        "%42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61,\n"
        "%62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81,\n"
        "%82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100,\n"
        "%101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116,\n"
        "%117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},\n"
        "%128, %129, p, 1, 1, 0, 0;\n"  // p = scale-d (1: D += A B), scale-a, scale-b, tnsp-a 0, tnsp-b 0
        "}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
          "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
          "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
          "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
          "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
          "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
          "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]),
          "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]),
          "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])
        : "l"(desc_a), "l"(desc_b), "r"(1));
}
#endif  // KJ_HAS_WGMMA

constexpr int PLAN_THREADS = 256;  // >= E

__global__ void count_tokens(const int* __restrict__ expert, int* __restrict__ counts, int T) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T) atomicAdd(&counts[expert[t]], 1);
}

// An inclusive scan of one value per thread over the block (Hillis-Steele in shared memory).
__device__ int block_inclusive_scan(int value, int* buffer) {
    const int i = threadIdx.x;
    buffer[i] = value;
    __syncthreads();
    for (int step = 1; step < PLAN_THREADS; step *= 2) {
        const int add = i >= step ? buffer[i - step] : 0;
        __syncthreads();
        buffer[i] += add;
        __syncthreads();
    }
    const int result = buffer[i];
    __syncthreads();
    return result;
}

// Group offsets, each group's scatter cursor, and the list of row tiles (expert, first sorted row, end row).
__global__ void __launch_bounds__(PLAN_THREADS) plan_tiles(const int* __restrict__ counts, int* __restrict__ cursor,
                                                           int* __restrict__ tile_expert, int* __restrict__ tile_row,
                                                           int* __restrict__ tile_end, int* __restrict__ total_tiles,
                                                           int E) {
    __shared__ int buffer[PLAN_THREADS];
    const int e = threadIdx.x;
    const int count = e < E ? counts[e] : 0;
    const int tiles = (count + TBM - 1) / TBM;
    const int row_end = block_inclusive_scan(count, buffer), first_row = row_end - count;
    const int tile_end_index = block_inclusive_scan(tiles, buffer), first_tile = tile_end_index - tiles;
    if (e < E) cursor[e] = first_row;
    for (int i = 0; i < tiles; ++i) {
        tile_expert[first_tile + i] = e;
        tile_row[first_tile + i] = first_row + i * TBM;
        tile_end[first_tile + i] = row_end;
    }
    if (e == PLAN_THREADS - 1) *total_tiles = tile_end_index;
}

__global__ void scatter_tokens(const int* __restrict__ expert, int* __restrict__ cursor, int* __restrict__ order,
                               int T) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t < T) order[atomicAdd(&cursor[expert[t]], 1)] = t;
}

// Xs[r] = X[order[r]]: one block per row, 16 bytes (8 halves) per thread and step; K % 8 == 0 here.
__global__ void gather_rows(const __half* __restrict__ X, const int* __restrict__ order, __half* __restrict__ Xs,
                            int K) {
    const int r = blockIdx.x;
    const uint4* src = reinterpret_cast<const uint4*>(X + (size_t)order[r] * K);
    uint4* dst = reinterpret_cast<uint4*>(Xs + (size_t)r * K);
    for (int c = threadIdx.x; c < K / 8; c += blockDim.x) dst[c] = src[c];
}

__global__ void __launch_bounds__(TTHREADS, 1)
    moe_wgmma(const __grid_constant__ CUtensorMap map_x, const __grid_constant__ CUtensorMap map_w,
              const int* __restrict__ order, const int* __restrict__ tile_expert, const int* __restrict__ tile_row,
              const int* __restrict__ tile_end, const int* __restrict__ total_tiles, float* __restrict__ Y,
              int max_tiles, int N, int k_steps) {
#if defined(__CUDA_ARCH__) && defined(KJ_HAS_WGMMA)
    // Which tile: grouped order over the most tiles there can be, GROUP_M row tiles at a time across all of N.
    const int tiles_n = (N + TBN - 1) / TBN;
    const int per_group = GROUP_M * tiles_n;
    const int group = blockIdx.x / per_group, first_m = group * GROUP_M;
    const int group_size = min(max_tiles - first_m, GROUP_M);
    const int in_group = blockIdx.x % per_group;
    const int tile = first_m + in_group % group_size, n0 = (in_group / group_size) * TBN;
    if (tile >= *total_tiles) return;  // the whole block: fewer tiles than the bound
    const int e = tile_expert[tile], row0 = tile_row[tile], row_end = tile_end[tile];
    const int w_row0 = e * N + n0;

    extern __shared__ uint8_t smem_raw[];
    // 128B-swizzled tiles must start on 1 KiB boundaries.
    uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
    uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES);
    uint64_t* empty = full + STAGES;
    auto stage_x = [&](int s) { return smem + s * STAGE_BYTES; };
    auto stage_w = [&](int s) { return smem + s * STAGE_BYTES + X_TILE_BYTES; };

    const int warpgroup = threadIdx.x / 128, t = threadIdx.x % 128;
    const int steps = k_steps;

    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(&full[s], 1);           // the producer's arrive.expect_tx (+ the TMA bytes)
            mbar_init(&empty[s], CONSUMERS);  // one arrive per consumer warpgroup
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // visible to the async proxy
    }
    __syncthreads();

    if (warpgroup == 0) {
        // Producer: give registers back to the consumers, then one thread streams the k-steps.
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (t == 0) {
            for (int step = 0; step < steps; ++step) {
                const int s = step % STAGES;
                if (step >= STAGES) mbar_wait(&empty[s], ((step / STAGES) + 1) & 1);  // its last use is done
                mbar_expect_tx(&full[s], STAGE_BYTES);  // out-of-bounds zero fill still counts its bytes
                const int k0 = step * TBK;
                tma_load_2d(stage_x(s), &map_x, k0, row0, &full[s]);
                tma_load_2d(stage_w(s), &map_w, k0, w_row0, &full[s]);
                tma_load_2d(stage_w(s) + W_TILE_BYTES / 2, &map_w, k0, w_row0 + W_BOX_ROWS, &full[s]);
            }
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        const int consumer = warpgroup - 1;  // sorted rows row0 + 64 consumer ...
        if (row0 + consumer * 64 >= row_end) {  // every row of this half is past the group: only release stages
            for (int step = 0; step < steps; ++step) {
                const int s = step % STAGES;
                mbar_wait(&full[s], (step / STAGES) & 1);
                if (t == 0) mbar_arrive(&empty[s]);
            }
            return;
        }
        float d[128];
#pragma unroll
        for (int i = 0; i < 128; ++i) d[i] = 0.0f;

        for (int step = 0; step < steps; ++step) {
            const int s = step % STAGES;
            mbar_wait(&full[s], (step / STAGES) & 1);
            const uint32_t x_base = smem_u32(stage_x(s)) + consumer * 64 * 128;  // 64 rows of 128 bytes
            const uint32_t w_base = smem_u32(stage_w(s));                        // 256 rows of 128 bytes
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < TBK / 16; ++kk) {
                const uint64_t desc_x = make_desc(x_base + kk * 32, 16, 1024);
                const uint64_t desc_w = make_desc(w_base + kk * 32, 16, 1024);
                wgmma_m64n256k16(d, desc_x, desc_w);
            }
            wgmma_commit();
            // Keep this step's wgmmas in flight; the previous step's are now finished, so its stage is free.
            wgmma_wait<1>();
            if (step > 0 && t == 0) mbar_arrive(&empty[(step - 1) % STAGES]);
        }
        wgmma_wait<0>();

        // Epilogue: rows inside the group, columns below N, each row to its token's row of Y.
        const int warp = t / 32, lane = t % 32;
        const int row = row0 + consumer * 64 + warp * 16 + lane / 4;
        const int col0 = n0 + 2 * (lane % 4);
        const bool pairs = (N % 2 == 0) && (reinterpret_cast<uintptr_t>(Y) % 8 == 0);
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half;
            if (r >= row_end) continue;
            float* out_row = Y + (size_t)order[r] * N;
#pragma unroll
            for (int j = 0; j < 32; ++j) {
                const int col = col0 + 8 * j;
                const float v0 = d[4 * j + 2 * half], v1 = d[4 * j + 2 * half + 1];
                if (pairs && col + 1 < N) {
                    *reinterpret_cast<float2*>(out_row + col) = make_float2(v0, v1);
                } else {
                    if (col < N) out_row[col] = v0;
                    if (col + 1 < N) out_row[col + 1] = v1;
                }
            }
        }
    }
#else
    __trap();  // compiled for a GPU without sm_90a features: solve() never launches this there
#endif
}

// --------------------------------------------------------------------------- fallback: rung 1's kernel
__global__ void moe_naive(const __half* __restrict__ X, const __half* __restrict__ W, const int* __restrict__ expert,
                          float* __restrict__ Y, int T, int N, int K) {
    const int n = blockIdx.x * blockDim.x + threadIdx.x;
    const int t = blockIdx.y * blockDim.y + threadIdx.y;
    if (t >= T || n >= N) return;
    const __half* x = X + (size_t)t * K;
    const __half* w = W + ((size_t)expert[t] * N + n) * K;
    float sum = 0.0f;
    for (int k = 0; k < K; ++k) sum = fmaf(__half2float(x[k]), __half2float(w[k]), sum);
    Y[(size_t)t * N + n] = sum;
}

void solve_fallback(const __half* X, const __half* W, const int* expert, float* Y, int T, int N, int K) {
    const dim3 threads(32, 8);
    const dim3 blocks((N + threads.x - 1) / threads.x, (T + threads.y - 1) / threads.y);
    moe_naive<<<blocks, threads>>>(X, W, expert, Y, T, N, K);
}

// ------------------------------------------------------------------------------------------- host side
using EncodeTiled = decltype(&cuTensorMapEncodeTiled);

// cuTensorMapEncodeTiled through the runtime's driver entry point (libcuda is not linked); null if absent.
EncodeTiled encode_tiled() {
    static EncodeTiled fn = [] {
        void* p = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            p = nullptr;
        return reinterpret_cast<EncodeTiled>(p);
    }();
    return fn;
}

// A row-major rows x K half matrix as a 2-D tensor map (innermost dimension first) with a box of 64 k x
// box_rows, 128-byte swizzle, out-of-bounds elements read as zero.
bool make_map(CUtensorMap* map, const __half* base, size_t rows, int K, int box_rows) {
    const cuuint64_t dims[2] = {(cuuint64_t)K, (cuuint64_t)rows};
    const cuuint64_t strides[1] = {(cuuint64_t)K * sizeof(__half)};  // bytes; must be a multiple of 16
    const cuuint32_t box[2] = {(cuuint32_t)TBK, (cuuint32_t)box_rows};
    const cuuint32_t element_strides[2] = {1, 1};
    return encode_tiled()(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, const_cast<__half*>(base), dims, strides, box,
                          element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                          CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

bool device_is_sm90() {
    static const int major = [] {
        int device = 0, value = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&value, cudaDevAttrComputeCapabilityMajor, device);
        return value;
    }();
    return major == 9;
}

// One scratch buffer, grown when a call needs more and kept between calls.
void* scratch(size_t bytes) {
    static void* buffer = nullptr;
    static size_t size = 0;
    if (bytes > size) {
        if (buffer) cudaFree(buffer);
        buffer = nullptr;
        size = 0;
        if (cudaMalloc(&buffer, bytes) != cudaSuccess) return nullptr;
        size = bytes;
    }
    return buffer;
}

}  // namespace

void solve(const __half* X, const __half* W, const int* expert, float* Y, int T, int E, int N, int K) {
    const int max_tiles = (T + TBM - 1) / TBM + (E < T ? E : T);
    // Scratch: counts[E], cursor[E], order[T], three tile lists of max_tiles, total, then Xs (16-byte aligned).
    const size_t ints = 2 * (size_t)E + T + 3 * (size_t)max_tiles + 1;
    const size_t xs_offset = (ints * sizeof(int) + 255) / 256 * 256;
    const bool tma_ok = K % 8 == 0 && (uintptr_t)X % 16 == 0 && (uintptr_t)W % 16 == 0;
    uint8_t* base = tma_ok && device_is_sm90() && encode_tiled()
                        ? static_cast<uint8_t*>(scratch(xs_offset + (size_t)T * K * sizeof(__half)))
                        : nullptr;
    static const bool attribute_set = [] {
        return cudaFuncSetAttribute(moe_wgmma, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) ==
               cudaSuccess;
    }();
    if (!base || !attribute_set) {
        solve_fallback(X, W, expert, Y, T, N, K);
        return;
    }
    int* counts = reinterpret_cast<int*>(base);
    int* cursor = counts + E;
    int* order = cursor + E;
    int* tile_expert = order + T;
    int* tile_row = tile_expert + max_tiles;
    int* tile_end = tile_row + max_tiles;
    int* total_tiles = tile_end + max_tiles;
    __half* Xs = reinterpret_cast<__half*>(base + xs_offset);

    // The descriptors depend only on the pointers and sizes: rebuild them when those change.
    static CUtensorMap map_x, map_w;
    static const void *last_xs = nullptr, *last_w = nullptr;
    static int last_t = -1, last_e = -1, last_n = -1, last_k = -1;
    static bool maps_ok = false;
    if (Xs != last_xs || W != last_w || T != last_t || E != last_e || N != last_n || K != last_k) {
        maps_ok = make_map(&map_x, Xs, T, K, TBM) && make_map(&map_w, W, (size_t)E * N, K, W_BOX_ROWS);
        last_xs = Xs, last_w = W, last_t = T, last_e = E, last_n = N, last_k = K;
    }
    if (!maps_ok) {
        solve_fallback(X, W, expert, Y, T, N, K);
        return;
    }

    cudaMemsetAsync(counts, 0, E * sizeof(int));
    count_tokens<<<(T + 255) / 256, 256>>>(expert, counts, T);
    plan_tiles<<<1, PLAN_THREADS>>>(counts, cursor, tile_expert, tile_row, tile_end, total_tiles, E);
    scatter_tokens<<<(T + 255) / 256, 256>>>(expert, cursor, order, T);
    gather_rows<<<T, 128>>>(X, order, Xs, K);
    const int blocks = max_tiles * ((N + TBN - 1) / TBN);
    moe_wgmma<<<blocks, TTHREADS, SMEM_BYTES>>>(map_x, map_w, order, tile_expert, tile_row, tile_end, total_tiles, Y,
                                                max_tiles, N, (K + TBK - 1) / TBK);
}
