// Rung 3 -- flash attention backward on 3xTF32 tensor cores.
//
// Over rung 2: the same schedule (a forward pass that keeps L and Delta per row, then
// key tiles that own dK and dV and add their share of dQ with atomics), with all seven
// products on mma.sync m16n8k8 TF32 tensor cores, kept float32-accurate by 3xTF32
// (x = big + small, both TF32; a*b ~= a_small*b_big + a_big*b_small + a_big*b_big).
// The forward statistics come from the causal-attention rung's kernel without its mask.
// In the backward kernel each warp owns 16 keys: it computes the transposed tiles
// S^T = K Q^T and dP^T = V dO^T, so that P^T and dS^T come out of the accumulators in
// exactly the layout of an A operand (the k-permutation of the forward kernel) and
// feed dV += P^T dO and dK += dS^T Q without a trip through shared memory; only dS is
// written there, for the dQ product, which the warps split by queries.

#include <cuda_runtime.h>

#include <math.h>
#include <stdint.h>

constexpr float LOG2E = 1.4426950408889634f;

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

// (1) Forward statistics. Block (head, query tile); thread (warp, g, t) holds rows warp*16*MT + 16*mt +
// g + 8*h of the tile. A flash forward pass (the causal-attention rung's kernel without the mask) that
// keeps, per row, only L = m + log2(l) (base 2) and Delta = dO . O.
template <int D, int BC, int WARPS, int MT, int MIN_BLOCKS>
__global__ void __launch_bounds__(32 * WARPS, MIN_BLOCKS)
    forward_stats(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                  const float* __restrict__ dO, float* __restrict__ lse, float* __restrict__ delta, int S, int d,
                  float qscale, bool vec) {
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

    const size_t head = blockIdx.x;
    Q += head * S * d;
    K += head * S * d;
    V += head * S * d;
    dO += head * S * d;
    lse += head * S;
    delta += head * S;

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int q0 = blockIdx.y * C::BR;
    const int warp_first = q0 + warp * 16 * MT;  // this warp's first row
    const int n_tiles = (S + BC - 1) / BC;

    // Start the first K/V tile, then stage Q (scaled by log2(e)/sqrt(d)) while it flies.
    stage_tile<BC, D, C::THREADS>(Kl, K, 0, S, d, vec);
    stage_tile<BC, D, C::THREADS>(Vl, V, 0, S, d, vec);
    cp_async_commit();
    for (int idx = threadIdx.x; idx < C::BR * D; idx += C::THREADS) {
        const int r = idx / D, c = idx % D;
        const int row = q0 + r;
        Qs[r * C::Q_STRIDE + c] = (row < S && c < d) ? Q[(size_t)row * d + c] * qscale : 0.0f;
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
            stage_tile<BC, D, C::THREADS>(Kl, K, (tile + 1) * BC, S, d, vec);
            stage_tile<BC, D, C::THREADS>(Vl, V, (tile + 1) * BC, S, d, vec);
        }
        cp_async_commit();

        const int kt0 = tile * BC;

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

        // ---- mask keys past S, online softmax ----
        if (kt0 + BC > S) {
#pragma unroll
            for (int nt = 0; nt < S_TILES; ++nt) {
                const int key = kt0 + 8 * nt + 2 * t;
#pragma unroll
                for (int mt = 0; mt < MT; ++mt) {
                    if (key >= S) s[mt][nt][0] = s[mt][nt][2] = -INFINITY;
                    if (key + 1 >= S) s[mt][nt][1] = s[mt][nt][3] = -INFINITY;
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
                const float m_new = fmaxf(m[mt][h], mx);
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

    // ---- finish: L = m + log2(l) and Delta = dO . O, each row summed over the 4 lanes of its quad ----
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
            float sum = l[mt][h];
            sum += __shfl_xor_sync(0xffffffffu, sum, 1);
            sum += __shfl_xor_sync(0xffffffffu, sum, 2);
            const int row = warp_first + 16 * mt + g + 8 * h;
            float dot = 0.0f;
            if (row < S) {
#pragma unroll
                for (int nt = 0; nt < O_TILES; ++nt) {
                    const int col = 8 * nt + 2 * t;
                    if (col < d) dot = fmaf(dO[(size_t)row * d + col], o[mt][nt][2 * h], dot);
                    if (col + 1 < d) dot = fmaf(dO[(size_t)row * d + col + 1], o[mt][nt][2 * h + 1], dot);
                }
            }
            dot += __shfl_xor_sync(0xffffffffu, dot, 1);
            dot += __shfl_xor_sync(0xffffffffu, dot, 2);
            if (row < S && t == 0) {
                lse[row] = m[mt][h] + log2f(sum);
                delta[row] = dot / sum;
            }
        }
    }
}

// (2) Backward. Block (head, key tile of 64 keys); warp w owns keys 16w..16w+15 of the tile, and holds
// their dK and dV rows in mma accumulators while every query tile of 64 passes by. Per query tile:
//   S^T = K Q^T and dP^T = V dO^T (16 keys x 64 queries per warp), P^T = 2^(S^T - L), dS^T = P^T (dP^T - Delta);
//   dV += P^T dO and dK += dS^T Q, with the P^T and dS^T accumulators reused directly as A operands;
//   dS goes to shared memory, and warp w adds dS K for queries 16w..16w+15 to dQ with atomics.
// Q, dO, K and V tiles are kept in fp32 (rows of D + 4 floats) and split into TF32 (big, small) pairs as
// the fragments are loaded. Fragment layouts and the k-permutation as in the forward kernel.
constexpr int BT = 64;                 // keys per block, queries per query tile
constexpr int BWD_WARPS = BT / 16;     // 4 warps of 16 keys
constexpr int BWD_THREADS = 32 * BWD_WARPS;
constexpr int DS_STRIDE = BT + 4;

template <int D>
struct BwdConfig {
    static constexpr int STRIDE = D + 4;  // fp32 tile rows: float2 A loads and scalar B loads are conflict-free
    static constexpr size_t SMEM_BYTES = (size_t)(4 * BT * STRIDE + BT * DS_STRIDE + 2 * BT) * 4;
};

// (big0, big1, small0, small1) of two floats adjacent in k: one B fragment for mma_3xtf32.
__device__ __forceinline__ uint4 split_pair(float x0, float x1) {
    uint4 u;
    split_tf32(x0, u.x, u.z);
    split_tf32(x1, u.y, u.w);
    return u;
}

// A fragment (rows r and r + 8, k elements 2t and 2t+1 of an 8-step) from an fp32 tile.
__device__ __forceinline__ void load_a(uint32_t (&big)[4], uint32_t (&small)[4], const float* p, int stride) {
    const float2 lo = *reinterpret_cast<const float2*>(p);               // row r
    const float2 hi = *reinterpret_cast<const float2*>(p + 8 * stride);  // row r + 8
    split_tf32(lo.x, big[0], small[0]);
    split_tf32(hi.x, big[1], small[1]);
    split_tf32(lo.y, big[2], small[2]);
    split_tf32(hi.y, big[3], small[3]);
}

// The accumulator of a 16 x 8 product as the A fragment of the next one (its 8 columns become k).
__device__ __forceinline__ void acc_as_a(uint32_t (&big)[4], uint32_t (&small)[4], const float (&c)[4]) {
    split_tf32(c[0], big[0], small[0]);
    split_tf32(c[2], big[1], small[1]);
    split_tf32(c[1], big[2], small[2]);
    split_tf32(c[3], big[3], small[3]);
}

// dst[r][c] = scale * src[row0 + r][c] (rows of d floats), zero outside S x d; rows of D + 4 floats.
template <int D>
__device__ __forceinline__ void load_rows(float* dst, const float* __restrict__ src, int row0, int S, int d,
                                          float scale) {
    for (int idx = threadIdx.x; idx < BT * D; idx += BWD_THREADS) {
        const int r = idx / D, c = idx % D;
        const int row = row0 + r;
        dst[r * (D + 4) + c] = (row < S && c < d) ? src[(size_t)row * d + c] * scale : 0.0f;
    }
}

template <int D>
__global__ void __launch_bounds__(BWD_THREADS)
    backward(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
             const float* __restrict__ dO, const float* __restrict__ lse, const float* __restrict__ delta,
             float* __restrict__ dQ, float* __restrict__ dK, float* __restrict__ dV, int S, int d, float qscale,
             float scale) {
    using C = BwdConfig<D>;
    constexpr int ST = C::STRIDE;
    constexpr int Q_TILES = BT / 8;  // 8-query n-tiles of S^T; k-steps of dV, dK
    constexpr int D_STEPS = D / 8;   // k-steps of S^T, dP^T; n-tiles of dV, dK, dQ
    constexpr int K_STEPS = BT / 8;  // k-steps of dQ (over the block's keys)

    extern __shared__ __align__(16) float smem[];
    float* Ks = smem;               // BT x ST: the block's keys
    float* Vs = Ks + BT * ST;       // BT x ST
    float* Qs = Vs + BT * ST;       // BT x ST: the query tile, scaled by log2(e)/sqrt(d)
    float* dOs = Qs + BT * ST;      // BT x ST
    float* dSs = dOs + BT * ST;     // BT x DS_STRIDE: dS [query][key]
    float* Ls = dSs + BT * DS_STRIDE;
    float* Ds = Ls + BT;

    const size_t head = blockIdx.x;
    const size_t base = head * S * d;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int k0 = blockIdx.y * BT;
    const int kw = warp * 16;  // the warp's keys within the tile: kw .. kw + 15

    load_rows<D>(Ks, K + base, k0, S, d, 1.0f);
    load_rows<D>(Vs, V + base, k0, S, d, 1.0f);

    float dk[D_STEPS][4], dv[D_STEPS][4];  // rows (keys) kw + g, kw + g + 8; columns 8nt + 2t, +1
#pragma unroll
    for (int nt = 0; nt < D_STEPS; ++nt) dk[nt][0] = dk[nt][1] = dk[nt][2] = dk[nt][3] = dv[nt][0] = dv[nt][1] =
        dv[nt][2] = dv[nt][3] = 0.0f;
    const bool key_lo = k0 + kw + g < S, key_hi = k0 + kw + g + 8 < S;

    for (int q0 = 0; q0 < S; q0 += BT) {
        load_rows<D>(Qs, Q + base, q0, S, d, qscale);
        load_rows<D>(dOs, dO + base, q0, S, d, 1.0f);
        if (threadIdx.x < BT) {
            const int row = q0 + threadIdx.x;
            Ls[threadIdx.x] = row < S ? lse[head * S + row] : 0.0f;
            Ds[threadIdx.x] = row < S ? delta[head * S + row] : 0.0f;
        }
        __syncthreads();  // tiles ready; everyone is done with the previous dS

        // ---- S^T = K Q^T and dP^T = V dO^T: keys kw + g (+8) x queries 8qt + 2t (+1) ----
        float p[Q_TILES][4], ds[Q_TILES][4];
#pragma unroll
        for (int qt = 0; qt < Q_TILES; ++qt) p[qt][0] = p[qt][1] = p[qt][2] = p[qt][3] = ds[qt][0] = ds[qt][1] =
            ds[qt][2] = ds[qt][3] = 0.0f;
#pragma unroll 2
        for (int ks = 0; ks < D_STEPS; ++ks) {
            uint32_t kb[4], ksm[4], vb[4], vsm[4];
            load_a(kb, ksm, Ks + (kw + g) * ST + 8 * ks + 2 * t, ST);
            load_a(vb, vsm, Vs + (kw + g) * ST + 8 * ks + 2 * t, ST);
#pragma unroll
            for (int qt = 0; qt < Q_TILES; ++qt) {
                const float2 q = *reinterpret_cast<const float2*>(Qs + (8 * qt + g) * ST + 8 * ks + 2 * t);
                const float2 o = *reinterpret_cast<const float2*>(dOs + (8 * qt + g) * ST + 8 * ks + 2 * t);
                mma_3xtf32(p[qt], kb, ksm, split_pair(q.x, q.y));
                mma_3xtf32(ds[qt], vb, vsm, split_pair(o.x, o.y));
            }
        }
        // P^T = 2^(S^T - L), dS^T = P^T (dP^T - Delta); zero for padded keys and queries.
#pragma unroll
        for (int qt = 0; qt < Q_TILES; ++qt) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int qi = 8 * qt + 2 * t + e;  // query within the tile (columns of entries e and 2 + e)
                const bool q_ok = q0 + qi < S;
                const float L = Ls[qi], Dl = Ds[qi];
                const float p_lo = (q_ok && key_lo) ? exp2f(p[qt][e] - L) : 0.0f;
                const float p_hi = (q_ok && key_hi) ? exp2f(p[qt][2 + e] - L) : 0.0f;
                p[qt][e] = p_lo;
                p[qt][2 + e] = p_hi;
                ds[qt][e] = p_lo * (ds[qt][e] - Dl);
                ds[qt][2 + e] = p_hi * (ds[qt][2 + e] - Dl);
                dSs[qi * DS_STRIDE + kw + g] = ds[qt][e];
                dSs[qi * DS_STRIDE + kw + g + 8] = ds[qt][2 + e];
            }
        }

        // ---- dV += P^T dO, dK += dS^T Q (k = the tile's queries, n = head columns) ----
#pragma unroll
        for (int kk = 0; kk < Q_TILES; ++kk) {  // unrolled: p[kk], ds[kk] stay in registers
            uint32_t pb[4], psm[4], sb[4], ssm[4];
            acc_as_a(pb, psm, p[kk]);
            acc_as_a(sb, ssm, ds[kk]);
            const float* o_rows = dOs + (8 * kk + 2 * t) * ST + g;  // queries 8kk + 2t, +1; column g
            const float* q_rows = Qs + (8 * kk + 2 * t) * ST + g;
#pragma unroll
            for (int nt = 0; nt < D_STEPS; ++nt) {
                mma_3xtf32(dv[nt], pb, psm, split_pair(o_rows[8 * nt], o_rows[8 * nt + ST]));
                mma_3xtf32(dk[nt], sb, ssm, split_pair(q_rows[8 * nt], q_rows[8 * nt + ST]));
            }
        }
        __syncthreads();  // dS complete

        // ---- dQ += dS K / sqrt(d): warp w takes queries 16w .. 16w + 15, k = the block's 64 keys ----
        {
            float dq[D_STEPS][4];
#pragma unroll
            for (int nt = 0; nt < D_STEPS; ++nt) dq[nt][0] = dq[nt][1] = dq[nt][2] = dq[nt][3] = 0.0f;
#pragma unroll 2
            for (int kk = 0; kk < K_STEPS; ++kk) {
                uint32_t ab[4], asm_[4];
                load_a(ab, asm_, dSs + (16 * warp + g) * DS_STRIDE + 8 * kk + 2 * t, DS_STRIDE);
                const float* k_rows = Ks + (8 * kk + 2 * t) * ST + g;  // keys 8kk + 2t, +1; column g
#pragma unroll
                for (int nt = 0; nt < D_STEPS; ++nt)
                    mma_3xtf32(dq[nt], ab, asm_, split_pair(k_rows[8 * nt], k_rows[8 * nt + ST]));
            }
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = q0 + 16 * warp + g + 8 * h;
                if (row >= S) continue;
#pragma unroll
                for (int nt = 0; nt < D_STEPS; ++nt) {
                    const int col = 8 * nt + 2 * t;
                    if (col < d) atomicAdd(&dQ[base + (size_t)row * d + col], dq[nt][2 * h] * scale);
                    if (col + 1 < d) atomicAdd(&dQ[base + (size_t)row * d + col + 1], dq[nt][2 * h + 1] * scale);
                }
            }
        }
        __syncthreads();  // Q, dO, L, Delta and dS are overwritten by the next query tile
    }

    // dK = dS^T Q / sqrt(d), and the Q tile held Q log2(e) / sqrt(d): dK = acc / log2(e).
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        const int key = k0 + kw + g + 8 * h;
        if (key >= S) continue;
#pragma unroll
        for (int nt = 0; nt < D_STEPS; ++nt) {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int col = 8 * nt + 2 * t + e;
                if (col < d) {
                    dK[base + (size_t)key * d + col] = dk[nt][2 * h + e] * (1.0f / LOG2E);
                    dV[base + (size_t)key * d + col] = dv[nt][2 * h + e];
                }
            }
        }
    }
}

// ------------------------------------------------------------------------------------------------
// Host side
// ------------------------------------------------------------------------------------------------

// Scratch for L and Delta (2 x heads x S floats): grown on demand, never shrunk.
static float* g_scratch = nullptr;
static size_t g_scratch_floats = 0;

template <int D, int BC, int WARPS, int MT, int MIN_BLOCKS>
static void launch(const float* Q, const float* K, const float* V, const float* dO, float* grads, size_t heads,
                   int S, int d) {
    const size_t need = 2 * heads * S;
    if (need > g_scratch_floats) {
        if (g_scratch) cudaFree(g_scratch);
        g_scratch = nullptr;
        g_scratch_floats = 0;
        if (cudaMalloc(&g_scratch, need * sizeof(float)) != cudaSuccess) return;
        g_scratch_floats = need;
    }
    float* lse = g_scratch;
    float* delta = g_scratch + heads * S;
    const size_t total = heads * S * d;
    float* dQ = grads;
    float* dK = grads + total;
    float* dV = grads + 2 * total;
    const float scale = (float)(1.0 / sqrt((double)d));
    const float qscale = (float)(LOG2E / sqrt((double)d));
    const bool vec = d % 4 == 0 && ((uintptr_t)K % 16) == 0 && ((uintptr_t)V % 16) == 0;

    using F = TcConfig<D, BC, WARPS, MT>;
    auto fwd = forward_stats<D, BC, WARPS, MT, MIN_BLOCKS>;
    cudaFuncSetAttribute(fwd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)F::SMEM_BYTES);
    fwd<<<dim3((unsigned)heads, (S + F::BR - 1) / F::BR), F::THREADS, F::SMEM_BYTES>>>(Q, K, V, dO, lse, delta, S, d,
                                                                                      qscale, vec);

    cudaMemsetAsync(dQ, 0, total * sizeof(float));  // dQ is accumulated with atomics
    auto bwd = backward<D>;
    cudaFuncSetAttribute(bwd, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)BwdConfig<D>::SMEM_BYTES);
    bwd<<<dim3((unsigned)heads, (S + BT - 1) / BT), BWD_THREADS, BwdConfig<D>::SMEM_BYTES>>>(
        Q, K, V, dO, lse, delta, dQ, dK, dV, S, d, qscale, scale);
}

// Head sizes padded to 32, 64 or 128; the forward pass uses the causal rung's tile choices.
void solve(const float* Q, const float* K, const float* V, const float* dO, float* grads, int B, int H, int S,
           int D) {
    const size_t heads = (size_t)B * H;
    if (D <= 32)
        launch<32, 64, 4, 1, 2>(Q, K, V, dO, grads, heads, S, D);
    else if (D <= 64)
        launch<64, 32, 8, 2, 1>(Q, K, V, dO, grads, heads, S, D);
    else
        launch<128, 32, 8, 1, 1>(Q, K, V, dO, grads, heads, S, D);
}
