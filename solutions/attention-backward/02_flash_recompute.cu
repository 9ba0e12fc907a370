// Rung 2 -- flash-style attention backward (FlashAttention-2's schedule), float32 on the FP32 pipe.
//
// Over rung 1: no S x S matrix ever reaches memory. Two kernels:
// (1) forward_stats: a flash forward pass per 64-query tile (online softmax over
//     64-key tiles, scores in base 2 with log2(e)/sqrt(D) folded into Q) that keeps
//     only two numbers per row: the log-sum-exp L_i = m_i + log2(l_i) and
//     Delta_i = dO_i . O_i.
// (2) backward: a block owns a 64-key tile of one head, holds its K and V tiles in
//     shared memory and its dK and dV in registers, and streams every query tile
//     past: P = 2^(s - L) is rebuilt from Q, K and L alone (no normalisation),
//     dS = P * (dO V^T - Delta), then dV += P^T dO, dK += dS^T Q, and the tile's share
//     of dQ = dS K / sqrt(D) is added to dQ with atomics (dQ is a sum over keys, which
//     no block owns). Every product is a 64 x 64 x D tile: each thread holds a 4 x 4
//     (or 4 x 4D/64) register tile and reads float4s from padded shared memory, so
//     each shared load feeds several FMAs. Heads are padded to D = 64 or 128.

#include <cuda_runtime.h>

#include <math.h>

constexpr int T = 64;             // queries per query tile, keys per key tile
constexpr int THREADS = 256;      // 16 x 16: tx = tid % 16, ty = tid / 16
constexpr int PS_STRIDE = T + 16; // P / dS tile row stride: rows ty, ty+1 of a warp hit disjoint banks
constexpr float LOG2E = 1.4426950408889634f;

// dst[r][c] = scale * src[row0 + r][c] for r < 64, c < DP; zero outside the rows x d matrix.
template <int DP>
__device__ __forceinline__ void load_tile(float* dst, const float* __restrict__ src, int row0, int rows, int d,
                                          float scale) {
    for (int idx = threadIdx.x; idx < T * DP; idx += THREADS) {
        const int r = idx / DP, c = idx % DP;
        const int row = row0 + r;
        dst[r * (DP + 4) + c] = (row < rows && c < d) ? src[(size_t)row * d + c] * scale : 0.0f;
    }
}

// acc[i][j] = sum_c A[ty + 16i][c] * B[tx + 16j][c]: a 64 x 64 tile of A B^T, both rows of DP floats
// (stride DP + 4: the float4 reads of 8 consecutive rows hit 8 distinct 16-byte bank groups).
template <int DP>
__device__ __forceinline__ void tile_abt(float (&acc)[4][4], const float* A, const float* B) {
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = 0.0f;
#pragma unroll 4
    for (int c = 0; c < DP; c += 4) {
        float4 a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) a[i] = *reinterpret_cast<const float4*>(&A[(ty + 16 * i) * (DP + 4) + c]);
#pragma unroll
        for (int j = 0; j < 4; ++j) b[j] = *reinterpret_cast<const float4*>(&B[(tx + 16 * j) * (DP + 4) + c]);
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                acc[i][j] = fmaf(a[i].x, b[j].x, acc[i][j]);
                acc[i][j] = fmaf(a[i].y, b[j].y, acc[i][j]);
                acc[i][j] = fmaf(a[i].z, b[j].z, acc[i][j]);
                acc[i][j] = fmaf(a[i].w, b[j].w, acc[i][j]);
            }
    }
}

// ------------------------------------------------------------------------------------------------
// (1) forward statistics: L (base 2) and Delta per query row
// ------------------------------------------------------------------------------------------------

template <int DP>
__global__ void __launch_bounds__(THREADS) forward_stats(const float* __restrict__ Q, const float* __restrict__ K,
                                                         const float* __restrict__ V, const float* __restrict__ dO,
                                                         float* __restrict__ lse, float* __restrict__ delta, int S,
                                                         int d, float qscale) {
    constexpr int VG = DP / 64;  // float4 column groups per thread: columns 64g + 4tx + 0..3
    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;                 // T x (DP + 4), scaled by log2(e)/sqrt(d)
    float* Ks = Qs + T * (DP + 4);    // T x (DP + 4)
    float* Vs = Ks + T * (DP + 4);    // T x (DP + 4)
    float* Ps = Vs + T * (DP + 4);    // T x PS_STRIDE

    const size_t head = blockIdx.x;
    const size_t base = head * S * d;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int q0 = blockIdx.y * T;

    load_tile<DP>(Qs, Q + base, q0, S, d, qscale);
    float m[4], l[4], o[4][VG][4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
#pragma unroll
        for (int g = 0; g < VG; ++g) o[i][g][0] = o[i][g][1] = o[i][g][2] = o[i][g][3] = 0.0f;
    }

    for (int k0 = 0; k0 < S; k0 += T) {
        load_tile<DP>(Ks, K + base, k0, S, d, 1.0f);
        load_tile<DP>(Vs, V + base, k0, S, d, 1.0f);
        __syncthreads();  // Q, K, V tiles ready; everyone is done with the previous P tile
        float s[4][4];
        tile_abt<DP>(s, Qs, Ks);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            float mt = -INFINITY;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                if (k0 + tx + 16 * j >= S) s[i][j] = -INFINITY;  // padded key: weight 0
                mt = fmaxf(mt, s[i][j]);
            }
#pragma unroll
            for (int off = 8; off > 0; off >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
            const float m_new = fmaxf(m[i], mt);      // finite: every tile has a valid key
            const float alpha = exp2f(m[i] - m_new);  // 0 on the first tile
            m[i] = m_new;
            float rs = 0.0f;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const float p = exp2f(s[i][j] - m_new);
                Ps[(ty + 16 * i) * PS_STRIDE + tx + 16 * j] = p;
                rs += p;
            }
            l[i] = l[i] * alpha + rs;
#pragma unroll
            for (int g = 0; g < VG; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e) o[i][g][e] *= alpha;
        }
        __syncthreads();  // P tile complete
#pragma unroll 4
        for (int kk = 0; kk < T; ++kk) {
#pragma unroll
            for (int g = 0; g < VG; ++g) {
                const float4 v = *reinterpret_cast<const float4*>(&Vs[kk * (DP + 4) + 64 * g + 4 * tx]);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    const float p = Ps[(ty + 16 * i) * PS_STRIDE + kk];
                    o[i][g][0] = fmaf(p, v.x, o[i][g][0]);
                    o[i][g][1] = fmaf(p, v.y, o[i][g][1]);
                    o[i][g][2] = fmaf(p, v.z, o[i][g][2]);
                    o[i][g][3] = fmaf(p, v.w, o[i][g][3]);
                }
            }
        }
        __syncthreads();  // K, V and P are overwritten next
    }

    // L = m + log2(l) and Delta = dO . O (O = o / l), each reduced over the 16 threads of a row.
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        float sum = l[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        const int row = q0 + ty + 16 * i;
        float dot = 0.0f;
        if (row < S) {
#pragma unroll
            for (int g = 0; g < VG; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int col = 64 * g + 4 * tx + e;
                    if (col < d) dot = fmaf(dO[base + (size_t)row * d + col], o[i][g][e], dot);
                }
        }
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) dot += __shfl_xor_sync(0xffffffffu, dot, off);
        if (row < S && tx == 0) {
            lse[head * S + row] = m[i] + log2f(sum);
            delta[head * S + row] = dot / sum;
        }
    }
}

// ------------------------------------------------------------------------------------------------
// (2) backward: dK, dV for a key tile; dQ by atomics
// ------------------------------------------------------------------------------------------------

template <int DP>
__global__ void __launch_bounds__(THREADS) backward(const float* __restrict__ Q, const float* __restrict__ K,
                                                    const float* __restrict__ V, const float* __restrict__ dO,
                                                    const float* __restrict__ lse, const float* __restrict__ delta,
                                                    float* __restrict__ dQ, float* __restrict__ dK,
                                                    float* __restrict__ dV, int S, int d, float qscale,
                                                    float scale) {
    constexpr int VG = DP / 64;
    extern __shared__ __align__(16) float smem[];
    float* Ks = smem;                  // T x (DP + 4): this block's keys
    float* Vs = Ks + T * (DP + 4);     // T x (DP + 4)
    float* Qs = Vs + T * (DP + 4);     // T x (DP + 4): the query tile, scaled by log2(e)/sqrt(d)
    float* dOs = Qs + T * (DP + 4);    // T x (DP + 4)
    float* Ps = dOs + T * (DP + 4);    // T x PS_STRIDE: [query][key]
    float* dSs = Ps + T * PS_STRIDE;   // T x PS_STRIDE: [query][key]
    float* Ls = dSs + T * PS_STRIDE;   // T: L of the tile's queries
    float* Ds = Ls + T;                // T: Delta of the tile's queries

    const size_t head = blockIdx.x;
    const size_t base = head * S * d;
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int k0 = blockIdx.y * T;

    load_tile<DP>(Ks, K + base, k0, S, d, 1.0f);
    load_tile<DP>(Vs, V + base, k0, S, d, 1.0f);
    // This thread's share of dK and dV: keys k0 + ty + 16i, columns 64g + 4tx + 0..3.
    float dk[4][VG][4], dv[4][VG][4];
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int g = 0; g < VG; ++g)
#pragma unroll
            for (int e = 0; e < 4; ++e) dk[i][g][e] = dv[i][g][e] = 0.0f;

    for (int q0 = 0; q0 < S; q0 += T) {
        load_tile<DP>(Qs, Q + base, q0, S, d, qscale);
        load_tile<DP>(dOs, dO + base, q0, S, d, 1.0f);
        if (threadIdx.x < T) {
            const int row = q0 + threadIdx.x;
            Ls[threadIdx.x] = row < S ? lse[head * S + row] : 0.0f;
            Ds[threadIdx.x] = row < S ? delta[head * S + row] : 0.0f;
        }
        __syncthreads();  // tiles ready; everyone is done with the previous P and dS

        // ---- P = 2^(s - L), dS = P (dO.V - Delta) for queries ty + 16i, keys tx + 16j ----
        float s[4][4], dp[4][4];
        tile_abt<DP>(s, Qs, Ks);
        tile_abt<DP>(dp, dOs, Vs);
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int r = ty + 16 * i;
            const bool row_ok = q0 + r < S;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int c = tx + 16 * j;
                const float p = (row_ok && k0 + c < S) ? exp2f(s[i][j] - Ls[r]) : 0.0f;
                Ps[r * PS_STRIDE + c] = p;
                dSs[r * PS_STRIDE + c] = p * (dp[i][j] - Ds[r]);
            }
        }
        __syncthreads();  // P and dS complete

        // ---- dV += P^T dO, dK += dS^T Q (keys ty + 16i, columns 64g + 4tx + e) ----
#pragma unroll 2
        for (int r = 0; r < T; ++r) {
            float p[4], ds[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) {
                p[i] = Ps[r * PS_STRIDE + ty + 16 * i];
                ds[i] = dSs[r * PS_STRIDE + ty + 16 * i];
            }
#pragma unroll
            for (int g = 0; g < VG; ++g) {
                const float4 x = *reinterpret_cast<const float4*>(&dOs[r * (DP + 4) + 64 * g + 4 * tx]);
                const float4 q = *reinterpret_cast<const float4*>(&Qs[r * (DP + 4) + 64 * g + 4 * tx]);
#pragma unroll
                for (int i = 0; i < 4; ++i) {
                    dv[i][g][0] = fmaf(p[i], x.x, dv[i][g][0]);
                    dv[i][g][1] = fmaf(p[i], x.y, dv[i][g][1]);
                    dv[i][g][2] = fmaf(p[i], x.z, dv[i][g][2]);
                    dv[i][g][3] = fmaf(p[i], x.w, dv[i][g][3]);
                    dk[i][g][0] = fmaf(ds[i], q.x, dk[i][g][0]);
                    dk[i][g][1] = fmaf(ds[i], q.y, dk[i][g][1]);
                    dk[i][g][2] = fmaf(ds[i], q.z, dk[i][g][2]);
                    dk[i][g][3] = fmaf(ds[i], q.w, dk[i][g][3]);
                }
            }
        }

        // ---- dQ += dS K / sqrt(d) (queries ty + 16i, columns 64g + 4tx + e), added with atomics ----
        float dq[4][VG][4];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int g = 0; g < VG; ++g) dq[i][g][0] = dq[i][g][1] = dq[i][g][2] = dq[i][g][3] = 0.0f;
#pragma unroll 2
        for (int kk = 0; kk < T; kk += 4) {
            float4 ds4[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) ds4[i] = *reinterpret_cast<const float4*>(&dSs[(ty + 16 * i) * PS_STRIDE + kk]);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
#pragma unroll
                for (int g = 0; g < VG; ++g) {
                    const float4 k = *reinterpret_cast<const float4*>(&Ks[(kk + u) * (DP + 4) + 64 * g + 4 * tx]);
#pragma unroll
                    for (int i = 0; i < 4; ++i) {
                        const float w = u == 0 ? ds4[i].x : u == 1 ? ds4[i].y : u == 2 ? ds4[i].z : ds4[i].w;
                        dq[i][g][0] = fmaf(w, k.x, dq[i][g][0]);
                        dq[i][g][1] = fmaf(w, k.y, dq[i][g][1]);
                        dq[i][g][2] = fmaf(w, k.z, dq[i][g][2]);
                        dq[i][g][3] = fmaf(w, k.w, dq[i][g][3]);
                    }
                }
            }
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const int row = q0 + ty + 16 * i;
            if (row >= S) continue;
#pragma unroll
            for (int g = 0; g < VG; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int col = 64 * g + 4 * tx + e;
                    if (col < d) atomicAdd(&dQ[base + (size_t)row * d + col], dq[i][g][e] * scale);
                }
        }
        __syncthreads();  // Q, dO, P and dS are overwritten by the next query tile
    }

    // dK = dS^T Q / sqrt(d), and the Q tile held Q log2(e) / sqrt(d): dK = acc / log2(e).
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int key = k0 + ty + 16 * i;
        if (key >= S) continue;
#pragma unroll
        for (int g = 0; g < VG; ++g)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = 64 * g + 4 * tx + e;
                if (col < d) {
                    dK[base + (size_t)key * d + col] = dk[i][g][e] * (1.0f / LOG2E);
                    dV[base + (size_t)key * d + col] = dv[i][g][e];
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

template <int DP>
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
    const int tiles = (S + T - 1) / T;
    const dim3 grid((unsigned)heads, tiles);

    const size_t smem_fwd = (3 * T * (DP + 4) + T * PS_STRIDE) * sizeof(float);
    cudaFuncSetAttribute(forward_stats<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_fwd);
    forward_stats<DP><<<grid, THREADS, smem_fwd>>>(Q, K, V, dO, lse, delta, S, d, qscale);

    cudaMemsetAsync(dQ, 0, total * sizeof(float));  // dQ is accumulated with atomics
    const size_t smem_bwd = (4 * T * (DP + 4) + 2 * T * PS_STRIDE + 2 * T) * sizeof(float);
    cudaFuncSetAttribute(backward<DP>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem_bwd);
    backward<DP><<<grid, THREADS, smem_bwd>>>(Q, K, V, dO, lse, delta, dQ, dK, dV, S, d, qscale, scale);
}

void solve(const float* Q, const float* K, const float* V, const float* dO, float* grads, int B, int H, int S,
           int D) {
    const size_t heads = (size_t)B * H;
    if (D <= 64)
        launch<64>(Q, K, V, dO, grads, heads, S, D);
    else
        launch<128>(Q, K, V, dO, grads, heads, S, D);
}
