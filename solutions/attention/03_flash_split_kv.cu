// Rung 3 -- flash attention on the tensor cores (3xTF32), keys split across blocks.
//
// Over rung 2: (1) both products run on mma.sync m16n8k8 TF32 tensor cores, kept
// float32-accurate by 3xTF32 (x = big + small, both TF32; a*b ~= big*big + big*small
// + small*big): even at three mma per product this beats the FP32 pipe. The scores
// stay in the mma accumulators, and a k-permutation makes the score accumulator the
// A operand of P.V directly. K/V tiles arrive by cp.async and are split once per
// block into fragment-ordered (big, small) shared memory: one 16-byte load per B
// fragment. (2) Split-KV (flash-decoding): when the query tiles alone cannot fill the
// GPU, each (query tile, key chunk) block writes a partial (max, sum, unnormalised O)
// and a merge kernel combines them. Heads wider than 128 take a SIMT fallback.

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

constexpr float LOG2E = 1.4426950408889634f;
constexpr int MAX_SPLITS = 128;     // most key chunks per query tile
constexpr int MERGE_THREADS = 256;

// ------------------------------------------------------------------------------------------------
// Small device helpers
// ------------------------------------------------------------------------------------------------

__device__ __forceinline__ float fast_exp2(float x) {  // 2^x; 2^-inf = 0
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// x ~= big + small, both TF32 (the mma reads the top 19 bits of each 32-bit operand). big is x
// rounded to nearest at 10 mantissa bits (add half an ulp of TF32, clear the 13 low bits); x - big
// is exact in float32; adding half a TF32 ulp to it makes the mma's truncation a rounding. Four
// integer/float ops instead of the eight that cvt.rna.tf32.f32 expands to (inputs are finite).
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    constexpr uint32_t HALF_ULP = 0x1000u, KEEP = 0xffffe000u;
    big = (__float_as_uint(x) + HALF_ULP) & KEEP;
    small = __float_as_uint(x - __uint_as_float(big)) + HALF_ULP;
}

// c += a * b, one m16n8k8 TF32 tensor-core product.
__device__ __forceinline__ void mma_tf32(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// c += a * b in 3xTF32; b = (big0, big1, small0, small1). The small cross terms go first.
__device__ __forceinline__ void mma_3xtf32(float (&c)[4], const uint32_t (&a_big)[4], const uint32_t (&a_small)[4],
                                           const uint4& b) {
    mma_tf32(c, a_small, b.x, b.y);
    mma_tf32(c, a_big, b.z, b.w);
    mma_tf32(c, a_big, b.x, b.y);
}

__device__ __forceinline__ void cp_async16(float* smem_dst, const float* gmem_src, bool valid) {
    const uint32_t dst = (uint32_t)__cvta_generic_to_shared(smem_dst);
    const int src_bytes = valid ? 16 : 0;  // 0: fill the 16 bytes with zeros, read nothing
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(gmem_src), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

// ------------------------------------------------------------------------------------------------
// Tensor-core kernel, head dimension padded to D (32, 64 or 128)
// ------------------------------------------------------------------------------------------------

// mma.sync m16n8k8 fragments (g = lane / 4, t = lane % 4):
//   A 16x8 : a0 (g, t)  a1 (g+8, t)  a2 (g, t+4)  a3 (g+8, t+4)
//   B 8x8  : b0 (k=t, n=g)  b1 (k=t+4, n=g)
//   C 16x8 : c0 (g, 2t)  c1 (g, 2t+1)  c2 (g+8, 2t)  c3 (g+8, 2t+1)
// Any permutation of the k index is harmless if A and B use the same one. Both products use
// k-slot t <-> element 2t and k-slot t+4 <-> element 2t+1 of their 8-wide step. Then a Q
// fragment is two float2 loads, the score accumulator (c0..c3) is directly the P fragment
// (a0 = c0, a1 = c2, a2 = c1, a3 = c3), and a B fragment is one "unit" of 4 words
// (big(e0), big(e1), small(e0), small(e1)) for two elements adjacent in k:
//   K unit (key n, pair p)  : elements K[n][2p], K[n][2p+1]      -> Q.K^T fragment (n = 8nt+g, p = 4ks+t)
//   V unit (pair p, column n): elements V[2p][n], V[2p+1][n]     -> P.V fragment   (p = 4kk+t, n = 8nt+g)

template <int D, int BC, int WARPS, int MT>
struct TcConfig {
    static constexpr int BR = 16 * MT * WARPS;     // query rows per block: MT m-tiles of 16 rows per warp
    static constexpr int THREADS = 32 * WARPS;
    static constexpr int Q_STRIDE = D + 8;         // floats; float2 fragment reads: rows g..g+3 land 8 banks apart
    static constexpr int K_ROW_UNITS = D / 2 + 4;  // 16-byte units; 8 lanes (g, g+1) x (t) hit 8 distinct bank groups
    static constexpr int V_ROW_UNITS = D + 2;      // 16-byte units; 8 lanes (t) x (g, g+1) hit 8 distinct bank groups
    static constexpr int Q_FLOATS = BR * Q_STRIDE;
    static constexpr int LANDING_FLOATS = 2 * BC * D;  // fp32 K and V tiles as cp.async delivers them
    static constexpr int KSPLIT_FLOATS = BC * K_ROW_UNITS * 4;
    static constexpr int VSPLIT_FLOATS = (BC / 2) * V_ROW_UNITS * 4;
    static constexpr size_t SMEM_BYTES = (size_t)(Q_FLOATS + LANDING_FLOATS + KSPLIT_FLOATS + VSPLIT_FLOATS) * 4;
};

// Copies keys [k0, k0 + ROWS) x head dims [0, D) of src (N x d) to dst (ROWS x D), zero outside
// N x d. vec: d % 4 == 0 and 16-byte aligned rows, so cp.async in 16-byte pieces.
template <int ROWS, int D, int THREADS>
__device__ __forceinline__ void stage_tile(float* dst, const float* __restrict__ src, int k0, int N, int d,
                                           bool vec) {
    if (vec) {
        constexpr int PIECES = D / 4;  // 16-byte pieces per row
        for (int idx = threadIdx.x; idx < ROWS * PIECES; idx += THREADS) {
            const int r = idx / PIECES, c = (idx % PIECES) * 4;
            const int key = k0 + r;
            const bool valid = key < N && c < d;  // d % 4 == 0: a piece is all in or all out
            cp_async16(dst + r * D + c, valid ? src + (size_t)key * d + c : src, valid);
        }
    } else {
        for (int idx = threadIdx.x; idx < ROWS * D; idx += THREADS) {
            const int r = idx / D, c = idx % D;
            const int key = k0 + r;
            dst[r * D + c] = (key < N && c < d) ? src[(size_t)key * d + c] : 0.0f;
        }
    }
}

// Block (blockIdx.x, blockIdx.y) = (query tile, key chunk [k_begin, k_end)). With part_o == nullptr
// (one chunk) it writes the normalised output; otherwise the unnormalised output to part_o
// [split][M][d] and (max, sum) to part_ml [split][M][2], for merge_kernel.
// Thread (warp, g, t) holds rows warp*16*MT + 16*mt + g + 8*h (m-tile mt, half h = 0 or 1).
template <int D, int BC, int WARPS, int MT, int MIN_BLOCKS>
__global__ void __launch_bounds__(32 * WARPS, MIN_BLOCKS)
    flash_tc_kernel(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                    float* __restrict__ O, float* __restrict__ part_o, float* __restrict__ part_ml, int M, int N,
                    int d, float qscale, int keys_per_split, bool vec) {
    using C = TcConfig<D, BC, WARPS, MT>;
    constexpr int S_TILES = BC / 8;   // score accumulator n-tiles (8 keys each)
    constexpr int QK_STEPS = D / 8;   // k-steps of Q.K^T
    constexpr int O_TILES = D / 8;    // output accumulator n-tiles (8 columns each)
    constexpr int PV_STEPS = BC / 8;  // k-steps of P.V
    static_assert(D % 32 == 0 && BC % 16 == 0, "tile sizes");

    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;                                            // BR x Q_STRIDE, scaled fp32
    float* Kl = Qs + C::Q_FLOATS;                                // BC x D fp32 (landing)
    float* Vl = Kl + BC * D;                                     // BC x D fp32 (landing)
    uint4* Ksp = reinterpret_cast<uint4*>(Vl + BC * D);          // BC x K_ROW_UNITS split units
    uint4* Vsp = reinterpret_cast<uint4*>(Vl + BC * D + C::KSPLIT_FLOATS);  // BC/2 x V_ROW_UNITS

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int q0 = blockIdx.x * C::BR;
    const int split = blockIdx.y;
    const int k_begin = split * keys_per_split;
    const int k_end = min(N, k_begin + keys_per_split);
    const int n_tiles = (k_end - k_begin + BC - 1) / BC;  // >= 1: the host makes no empty chunk

    // Start the first K/V tile, then stage Q (scaled by log2(e)/sqrt(d)) while it flies.
    stage_tile<BC, D, C::THREADS>(Kl, K, k_begin, N, d, vec);
    stage_tile<BC, D, C::THREADS>(Vl, V, k_begin, N, d, vec);
    cp_async_commit();
    for (int idx = threadIdx.x; idx < C::BR * D; idx += C::THREADS) {
        const int r = idx / D, c = idx % D;
        const int row = q0 + r;
        Qs[r * C::Q_STRIDE + c] = (row < M && c < d) ? Q[(size_t)row * d + c] * qscale : 0.0f;
    }

    float o[MT][O_TILES][4];  // unnormalised output: (row h=0: cols 8nt+2t, +1), (row h=1: same)
    float m[MT][2], l[MT][2];  // running max (base-2 units), running sum over this thread's keys only
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int nt = 0; nt < O_TILES; ++nt) o[mt][nt][0] = o[mt][nt][1] = o[mt][nt][2] = o[mt][nt][3] = 0.0f;
        m[mt][0] = m[mt][1] = -INFINITY;
        l[mt][0] = l[mt][1] = 0.0f;
    }
    const float* q_frag = Qs + (warp * 16 * MT + g) * C::Q_STRIDE + 2 * t;  // (row g, dims 2t, 2t+1)
    const uint4* k_frag = Ksp + g * C::K_ROW_UNITS + t;                      // unit (key g, pair t)
    const uint4* v_frag = Vsp + t * C::V_ROW_UNITS + g;                      // unit (pair t, column g)

    for (int tile = 0; tile < n_tiles; ++tile) {
        cp_async_wait_all();
        __syncthreads();  // landing holds this tile; every warp is done with the previous split tile

        // Split the landed tile once for the whole block.
        for (int u = threadIdx.x; u < BC * (D / 2); u += C::THREADS) {
            const int r = u / (D / 2), p = u % (D / 2);
            const float2 x = *reinterpret_cast<const float2*>(&Kl[r * D + 2 * p]);
            uint4 unit;
            split_tf32(x.x, unit.x, unit.z);
            split_tf32(x.y, unit.y, unit.w);
            Ksp[r * C::K_ROW_UNITS + p] = unit;
        }
        for (int u = threadIdx.x; u < (BC / 2) * D; u += C::THREADS) {
            const int p = u / D, n = u % D;
            uint4 unit;
            split_tf32(Vl[(2 * p) * D + n], unit.x, unit.z);
            split_tf32(Vl[(2 * p + 1) * D + n], unit.y, unit.w);
            Vsp[p * C::V_ROW_UNITS + n] = unit;
        }
        __syncthreads();  // split tile ready; landing is free again

        if (tile + 1 < n_tiles) {  // next tile flies while this one is computed
            const int k_next = k_begin + (tile + 1) * BC;
            stage_tile<BC, D, C::THREADS>(Kl, K, k_next, N, d, vec);
            stage_tile<BC, D, C::THREADS>(Vl, V, k_next, N, d, vec);
        }
        cp_async_commit();

        // ---- s = Q.K^T for 16*MT rows x BC keys (this thread: keys 8nt + 2t + {0,1}) ----
        float s[MT][S_TILES][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
#pragma unroll
            for (int nt = 0; nt < S_TILES; ++nt) s[mt][nt][0] = s[mt][nt][1] = s[mt][nt][2] = s[mt][nt][3] = 0.0f;
#pragma unroll
        for (int ks = 0; ks < QK_STEPS; ++ks) {
            uint32_t a_big[MT][4], a_small[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                const float* q = q_frag + 16 * mt * C::Q_STRIDE + 8 * ks;
                const float2 qa = *reinterpret_cast<const float2*>(q);                    // row g
                const float2 qb = *reinterpret_cast<const float2*>(q + 8 * C::Q_STRIDE);  // row g + 8
                split_tf32(qa.x, a_big[mt][0], a_small[mt][0]);
                split_tf32(qb.x, a_big[mt][1], a_small[mt][1]);
                split_tf32(qa.y, a_big[mt][2], a_small[mt][2]);
                split_tf32(qb.y, a_big[mt][3], a_small[mt][3]);
            }
#pragma unroll
            for (int nt = 0; nt < S_TILES; ++nt) {
                const uint4 kb = k_frag[8 * nt * C::K_ROW_UNITS + 4 * ks];  // unit (key 8nt + g, pair 4ks + t)
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) mma_3xtf32(s[mt][nt], a_big[mt], a_small[mt], kb);
            }
        }

        // ---- mask keys past the chunk, online softmax ----
        const int kt0 = k_begin + tile * BC;
        if (kt0 + BC > k_end) {
#pragma unroll
            for (int nt = 0; nt < S_TILES; ++nt) {
                const int key = kt0 + 8 * nt + 2 * t;
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    if (key >= k_end) s[mt][nt][0] = s[mt][nt][2] = -INFINITY;
                    if (key + 1 >= k_end) s[mt][nt][1] = s[mt][nt][3] = -INFINITY;
                }
            }
        }
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {  // row g + 8h: accumulator entries 2h, 2h+1
                float mx = -INFINITY;
#pragma unroll
                for (int nt = 0; nt < S_TILES; ++nt) mx = fmaxf(mx, fmaxf(s[mt][nt][2 * h], s[mt][nt][2 * h + 1]));
                // a row's BC keys are spread over the 4 lanes of a quad
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float m_new = fmaxf(m[mt][h], mx);  // finite: key kt0 is valid
                const float alpha = fast_exp2(m[mt][h] - m_new);  // 0 on the first tile
                m[mt][h] = m_new;
                float sum = 0.0f;
#pragma unroll
                for (int nt = 0; nt < S_TILES; ++nt) {
                    s[mt][nt][2 * h] = fast_exp2(s[mt][nt][2 * h] - m_new);
                    s[mt][nt][2 * h + 1] = fast_exp2(s[mt][nt][2 * h + 1] - m_new);
                    sum += s[mt][nt][2 * h] + s[mt][nt][2 * h + 1];
                }
                l[mt][h] = l[mt][h] * alpha + sum;
#pragma unroll
                for (int nt = 0; nt < O_TILES; ++nt) {
                    o[mt][nt][2 * h] *= alpha;
                    o[mt][nt][2 * h + 1] *= alpha;
                }
            }
        }

        // ---- o += P.V (k-step kk: keys 8kk..8kk+7; output n-tile nt: columns 8nt..8nt+7) ----
#pragma unroll
        for (int kk = 0; kk < PV_STEPS; ++kk) {
            uint32_t a_big[MT][4], a_small[MT][4];
#pragma unroll
            for (int mt = 0; mt < MT; ++mt) {
                split_tf32(s[mt][kk][0], a_big[mt][0], a_small[mt][0]);  // (row g,     key 8kk + 2t)
                split_tf32(s[mt][kk][2], a_big[mt][1], a_small[mt][1]);  // (row g + 8, key 8kk + 2t)
                split_tf32(s[mt][kk][1], a_big[mt][2], a_small[mt][2]);  // (row g,     key 8kk + 2t + 1)
                split_tf32(s[mt][kk][3], a_big[mt][3], a_small[mt][3]);  // (row g + 8, key 8kk + 2t + 1)
            }
#pragma unroll
            for (int nt = 0; nt < O_TILES; ++nt) {
                const uint4 vb = v_frag[4 * kk * C::V_ROW_UNITS + 8 * nt];  // unit (pair 4kk + t, column 8nt + g)
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) mma_3xtf32(o[mt][nt], a_big[mt], a_small[mt], vb);
            }
        }
    }

    // ---- finish: full row sums, then store (normalised, or as a partial for the merge) ----
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float sum = l[mt][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = q0 + warp * 16 * MT + 16 * mt + g + 8 * h;
            if (row >= M) continue;
            float* dst = O;
            float scale = 1.0f / sum;
            if (part_o != nullptr) {
                dst = part_o + (size_t)split * M * d;
                scale = 1.0f;
                if (t == 0) {
                    part_ml[((size_t)split * M + row) * 2] = m[mt][h];
                    part_ml[((size_t)split * M + row) * 2 + 1] = sum;
                }
            }
#pragma unroll
            for (int nt = 0; nt < O_TILES; ++nt) {
                const int col = 8 * nt + 2 * t;
                if (col < d) dst[(size_t)row * d + col] = o[mt][nt][2 * h] * scale;
                if (col + 1 < d) dst[(size_t)row * d + col + 1] = o[mt][nt][2 * h + 1] * scale;
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// SIMT fallback for heads wider than 128 (rung 2's kernel, taking a key chunk)
// ------------------------------------------------------------------------------------------------

namespace simt {
constexpr int BR = 64, BC = 64, THREADS = 256;  // 16 x 16 threads, 4x4 score tile each
constexpr int ROWS_PER_THREAD = BR / 16, KEYS_PER_THREAD = BC / 16;
constexpr int PS_STRIDE = BC + 16;
constexpr int DK = 64;   // head-dimension chunk of Q.K^T
constexpr int DV = 128;  // output columns per block (blockIdx.z)
constexpr int QK_STRIDE = DK + 4;
constexpr int VGROUPS = DV / 64;
constexpr int SMEM_FLOATS = (BR + BC) * QK_STRIDE + BC * DV + BR * PS_STRIDE;

template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile(float* dst, int stride, const float* __restrict__ src, int row0,
                                          int rows_total, int col0, int d, float scale) {
    for (int idx = threadIdx.x; idx < ROWS * COLS; idx += THREADS) {
        const int r = idx / COLS, c = idx % COLS;
        const int gr = row0 + r, gc = col0 + c;
        dst[r * stride + c] = (gr < rows_total && gc < d) ? src[(size_t)gr * d + gc] * scale : 0.0f;
    }
}

// grid (query tiles, key chunks, column slices); outputs as flash_tc_kernel's.
__global__ void __launch_bounds__(THREADS)
    flash_simt_kernel(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                      float* __restrict__ O, float* __restrict__ part_o, float* __restrict__ part_ml, int M, int N,
                      int d, float qscale, int keys_per_split) {
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;
    float* Ks = Qs + BR * QK_STRIDE;
    float* Vs = Ks + BC * QK_STRIDE;
    float* Ps = Vs + BC * DV;

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int q0 = blockIdx.x * BR, split = blockIdx.y, v0 = blockIdx.z * DV;
    const int k_begin = split * keys_per_split;
    const int k_end = min(N, k_begin + keys_per_split);

    float m[ROWS_PER_THREAD], l[ROWS_PER_THREAD], o[ROWS_PER_THREAD][VGROUPS][4];
#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
#pragma unroll
        for (int gi = 0; gi < VGROUPS; ++gi)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[i][gi][e] = 0.0f;
    }

    for (int k0 = k_begin; k0 < k_end; k0 += BC) {
        float s[ROWS_PER_THREAD][KEYS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i)
#pragma unroll
            for (int j = 0; j < KEYS_PER_THREAD; ++j) s[i][j] = 0.0f;
        for (int c0 = 0; c0 < d; c0 += DK) {
            load_tile<BR, DK>(Qs, QK_STRIDE, Q, q0, M, c0, d, qscale);
            load_tile<BC, DK>(Ks, QK_STRIDE, K, k0, N, c0, d, 1.0f);
            __syncthreads();
#pragma unroll 4
            for (int k = 0; k < DK; k += 4) {
                float4 qv[ROWS_PER_THREAD], kv[KEYS_PER_THREAD];
#pragma unroll
                for (int i = 0; i < ROWS_PER_THREAD; ++i)
                    qv[i] = *reinterpret_cast<const float4*>(&Qs[(ty + 16 * i) * QK_STRIDE + k]);
#pragma unroll
                for (int j = 0; j < KEYS_PER_THREAD; ++j)
                    kv[j] = *reinterpret_cast<const float4*>(&Ks[(tx + 16 * j) * QK_STRIDE + k]);
#pragma unroll
                for (int i = 0; i < ROWS_PER_THREAD; ++i)
#pragma unroll
                    for (int j = 0; j < KEYS_PER_THREAD; ++j) {
                        s[i][j] = fmaf(qv[i].x, kv[j].x, s[i][j]);
                        s[i][j] = fmaf(qv[i].y, kv[j].y, s[i][j]);
                        s[i][j] = fmaf(qv[i].z, kv[j].z, s[i][j]);
                        s[i][j] = fmaf(qv[i].w, kv[j].w, s[i][j]);
                    }
            }
            __syncthreads();
        }
        load_tile<BC, DV>(Vs, DV, V, k0, N, v0, d, 1.0f);
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            float mt = -INFINITY;
#pragma unroll
            for (int j = 0; j < KEYS_PER_THREAD; ++j) {
                if (k0 + tx + 16 * j >= k_end) s[i][j] = -INFINITY;
                mt = fmaxf(mt, s[i][j]);
            }
#pragma unroll
            for (int off = 8; off > 0; off >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
            const float m_new = fmaxf(m[i], mt);
            const float alpha = exp2f(m[i] - m_new);
            m[i] = m_new;
            float rs = 0.0f;
#pragma unroll
            for (int j = 0; j < KEYS_PER_THREAD; ++j) {
                const float p = exp2f(s[i][j] - m_new);
                Ps[(ty + 16 * i) * PS_STRIDE + tx + 16 * j] = p;
                rs += p;
            }
            l[i] = l[i] * alpha + rs;
#pragma unroll
            for (int gi = 0; gi < VGROUPS; ++gi)
#pragma unroll
                for (int e = 0; e < 4; ++e) o[i][gi][e] *= alpha;
        }
        __syncthreads();
#pragma unroll 2
        for (int kk = 0; kk < BC; kk += 4) {
            float4 p4[ROWS_PER_THREAD];
#pragma unroll
            for (int i = 0; i < ROWS_PER_THREAD; ++i)
                p4[i] = *reinterpret_cast<const float4*>(&Ps[(ty + 16 * i) * PS_STRIDE + kk]);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
#pragma unroll
                for (int gi = 0; gi < VGROUPS; ++gi) {
                    const float4 v = *reinterpret_cast<const float4*>(&Vs[(kk + u) * DV + 64 * gi + 4 * tx]);
#pragma unroll
                    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                        const float p = u == 0 ? p4[i].x : u == 1 ? p4[i].y : u == 2 ? p4[i].z : p4[i].w;
                        o[i][gi][0] = fmaf(p, v.x, o[i][gi][0]);
                        o[i][gi][1] = fmaf(p, v.y, o[i][gi][1]);
                        o[i][gi][2] = fmaf(p, v.z, o[i][gi][2]);
                        o[i][gi][3] = fmaf(p, v.w, o[i][gi][3]);
                    }
                }
            }
        }
    }

#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        float sum = l[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        const int row = q0 + ty + 16 * i;
        if (row >= M) continue;
        float* dst = O;
        float scale = 1.0f / sum;
        if (part_o != nullptr) {
            dst = part_o + (size_t)split * M * d;
            scale = 1.0f;
            if (blockIdx.z == 0 && tx == 0) {  // every column slice computes the same (m, l)
                part_ml[((size_t)split * M + row) * 2] = m[i];
                part_ml[((size_t)split * M + row) * 2 + 1] = sum;
            }
        }
#pragma unroll
        for (int gi = 0; gi < VGROUPS; ++gi)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = v0 + 64 * gi + 4 * tx + e;
                if (col < d) dst[(size_t)row * d + col] = o[i][gi][e] * scale;
            }
    }
}
}  // namespace simt

// ------------------------------------------------------------------------------------------------
// Merge of the key chunks: O = sum_s 2^(m_s - m) O_s / sum_s 2^(m_s - m) l_s, m = max_s m_s
// ------------------------------------------------------------------------------------------------

__global__ void __launch_bounds__(MERGE_THREADS)
    merge_kernel(const float* __restrict__ part_o, const float* __restrict__ part_ml, float* __restrict__ O, int M,
                 int d, int splits) {
    const size_t idx = (size_t)blockIdx.x * MERGE_THREADS + threadIdx.x;  // element (row, col) of O
    const size_t total = (size_t)M * d;
    if (idx >= total) return;
    const int row = (int)(idx / d);
    float mx = -INFINITY;
    for (int s = 0; s < splits; ++s) mx = fmaxf(mx, part_ml[((size_t)s * M + row) * 2]);
    float num = 0.0f, den = 0.0f;
    for (int s = 0; s < splits; ++s) {
        const float w = exp2f(part_ml[((size_t)s * M + row) * 2] - mx);
        den += w * part_ml[((size_t)s * M + row) * 2 + 1];
        num += w * part_o[(size_t)s * total + idx];
    }
    O[idx] = num / den;
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

// Scratch for the partials: grown on demand, never shrunk (kept across calls; holds no results).
static float* g_scratch = nullptr;
static size_t g_scratch_floats = 0;

static float* scratch(size_t floats) {
    if (floats > g_scratch_floats) {
        if (g_scratch) cudaFree(g_scratch);
        g_scratch = nullptr;
        g_scratch_floats = 0;
        if (cudaMalloc(&g_scratch, floats * sizeof(float)) != cudaSuccess) return nullptr;
        g_scratch_floats = floats;
    }
    return g_scratch;
}

static int sm_count() {
    int dev = 0, sms = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    return sms > 0 ? sms : 1;
}

// Keys per chunk (a multiple of `tile`). Models the run time as waves x tiles per block, where a
// wave is `slots` resident blocks and each block also pays about one tile of fixed cost, and
// picks the cheapest chunk count (the fewest on ties: fewer partials to merge).
static int choose_keys_per_split(int q_tiles, int N, int tile, int slots) {
    const int k_tiles = (N + tile - 1) / tile;
    const int max_splits = k_tiles < MAX_SPLITS ? k_tiles : MAX_SPLITS;
    long long best_cost = -1;
    int best_tiles = k_tiles;
    for (int s = 1; s <= max_splits; ++s) {
        const int tiles = (k_tiles + s - 1) / s;              // tiles per chunk
        const int chunks = (k_tiles + tiles - 1) / tiles;     // chunks actually used (none empty)
        const long long blocks = (long long)q_tiles * chunks;
        const long long waves = (blocks + slots - 1) / slots;
        const long long cost = waves * (tiles + 1);
        if (best_cost < 0 || cost < best_cost) best_cost = cost, best_tiles = tiles;
    }
    return best_tiles * tile;
}

template <int D, int BC, int WARPS, int MT, int MIN_BLOCKS>
static void launch_tc(const float* Q, const float* K, const float* V, float* O, int M, int N, int d) {
    using C = TcConfig<D, BC, WARPS, MT>;
    auto kernel = flash_tc_kernel<D, BC, WARPS, MT, MIN_BLOCKS>;
    static int slots = 0;  // resident blocks on the whole GPU (a property of the kernel, not of the data)
    if (slots == 0) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)C::SMEM_BYTES);
        int per_sm = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, C::THREADS, C::SMEM_BYTES);
        slots = (per_sm > 0 ? per_sm : 1) * sm_count();
    }

    const int q_tiles = (M + C::BR - 1) / C::BR;
    const int keys_per_split = choose_keys_per_split(q_tiles, N, BC, slots);
    const int splits = (N + keys_per_split - 1) / keys_per_split;
    const bool vec = d % 4 == 0 && ((uintptr_t)K % 16) == 0 && ((uintptr_t)V % 16) == 0;
    const float qscale = (float)(LOG2E / sqrt((double)d));

    float *part_o = nullptr, *part_ml = nullptr;
    if (splits > 1) {
        part_o = scratch((size_t)splits * M * (d + 2));
        if (!part_o) return;
        part_ml = part_o + (size_t)splits * M * d;
    }
    kernel<<<dim3(q_tiles, splits), C::THREADS, C::SMEM_BYTES>>>(Q, K, V, O, part_o, part_ml, M, N, d, qscale,
                                                                   keys_per_split, vec);
    if (splits > 1) {
        const size_t total = (size_t)M * d;
        merge_kernel<<<(unsigned)((total + MERGE_THREADS - 1) / MERGE_THREADS), MERGE_THREADS>>>(part_o, part_ml, O,
                                                                                                  M, d, splits);
    }
}

static void launch_simt(const float* Q, const float* K, const float* V, float* O, int M, int N, int d) {
    using namespace simt;
    const size_t smem = SMEM_FLOATS * sizeof(float);
    static int slots = 0;
    if (slots == 0) {
        cudaFuncSetAttribute(flash_simt_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        int per_sm = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flash_simt_kernel, THREADS, smem);
        slots = (per_sm > 0 ? per_sm : 1) * sm_count();
    }

    const int q_tiles = (M + BR - 1) / BR, col_slices = (d + DV - 1) / DV;
    const int keys_per_split = choose_keys_per_split(q_tiles * col_slices, N, BC, slots);
    const int splits = (N + keys_per_split - 1) / keys_per_split;
    const float qscale = (float)(LOG2E / sqrt((double)d));

    float *part_o = nullptr, *part_ml = nullptr;
    if (splits > 1) {
        part_o = scratch((size_t)splits * M * (d + 2));
        if (!part_o) return;
        part_ml = part_o + (size_t)splits * M * d;
    }
    flash_simt_kernel<<<dim3(q_tiles, splits, col_slices), THREADS, smem>>>(Q, K, V, O, part_o, part_ml, M, N, d,
                                                                             qscale, keys_per_split);
    if (splits > 1) {
        const size_t total = (size_t)M * d;
        merge_kernel<<<(unsigned)((total + MERGE_THREADS - 1) / MERGE_THREADS), MERGE_THREADS>>>(part_o, part_ml, O,
                                                                                                  M, d, splits);
    }
}

// Tiles per padded head size, as launch_tc<D, BC keys, WARPS, MT m-tiles per warp, MIN_BLOCKS> (picked by
// timing on an H100): d <= 32: 64 rows x 64 keys; d <= 64: 256 rows (8 warps x 32) x 32 keys; d <= 128:
// 128 rows (8 warps x 16) x 32 keys. d % 4 != 0 still takes the tensor cores, with plain staging loads.
void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    if (d <= 32)
        launch_tc<32, 64, 4, 1, 2>(Q, K, V, output, M, N, d);
    else if (d <= 64)
        launch_tc<64, 32, 8, 2, 1>(Q, K, V, output, M, N, d);
    else if (d <= 128)
        launch_tc<128, 32, 8, 1, 1>(Q, K, V, output, M, N, d);
    else
        launch_simt(Q, K, V, output, M, N, d);
}
