# Rung 2 (CuPy) -- 02_flash.cu as cupy.RawKernels: flash attention, the scores never leave the chip.
#
# Over rung 1, the CUDA rung's kernel text: a block owns 64 query rows and streams 64 keys at a time through
# shared memory, computes the 64x64 score tile (a 4x4 register tile per thread), folds it into an online softmax
# (running max and sum per row, the output accumulator rescaled by 2^(m_old - m_new)) and adds P.V in registers.
# The template's head-dimension cases (64, 128, 256, and a d-chunked generic path up to 1024) are four extern
# "C" entry points. Their shared memory (70 to 214 KiB) is past the default 48 KiB, so each launch first raises
# the kernel's max_dynamic_shared_size_bytes, as the CUDA rung's cudaFuncSetAttribute does. Float32 FMAs and
# exp2f throughout (the CUDA ladder's rung 3 moves the products to 3xTF32 tensor cores).
import math

import cupy

SOURCE = r"""
#ifndef INFINITY  // NVRTC defines no INFINITY (nvcc gets it from math.h)
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr int BR = 64;                       // query rows per block
constexpr int BC = 64;                       // keys per tile
constexpr int THREADS = 256;                 // 16 x 16 threads: tx = tid % 16, ty = tid / 16
constexpr int ROWS_PER_THREAD = BR / 16;     // this thread's rows: ty + 16*i
constexpr int KEYS_PER_THREAD = BC / 16;     // this thread's keys in a tile: tx + 16*j
constexpr int PS_STRIDE = BC + 16;           // P tile row stride: rows ty, ty+1 of a warp use disjoint banks

// dst[r][c] = scale * src[row0 + r][col0 + c] for r < ROWS, c < COLS; zero outside the
// rows_total x d matrix. Consecutive threads read consecutive columns (coalesced).
template <int ROWS, int COLS>
__device__ __forceinline__ void load_tile(float* dst, int stride, const float* __restrict__ src, int row0,
                                          int rows_total, int col0, int d, float scale) {
    for (int idx = threadIdx.x; idx < ROWS * COLS; idx += THREADS) {
        const int r = idx / COLS, c = idx % COLS;
        const int gr = row0 + r, gc = col0 + c;
        dst[r * stride + c] = (gr < rows_total && gc < d) ? src[(size_t)gr * d + gc] * scale : 0.0f;
    }
}

// DK: head-dimension chunk held in shared memory for Q.K^T (Q stays resident when d <= DK).
// DV: output columns per block (blockIdx.y selects the slice).
template <int DK, int DV>
__device__ __forceinline__ void flash_kernel(const float* __restrict__ Q, const float* __restrict__ K,
                                             const float* __restrict__ V, float* __restrict__ O,
                                             int M, int N, int d, float qscale) {
    constexpr int QK_STRIDE = DK + 4;  // float4 reads of 8 consecutive rows hit 8 distinct 16-byte banks
    constexpr int VGROUPS = DV / 64;   // float4 column groups per thread: columns 64*g + 4*tx + 0..3
    static_assert(DK % 32 == 0 && DV % 64 == 0, "tile sizes");

    extern __shared__ __align__(16) float smem[];
    float* Qs = smem;                   // BR x QK_STRIDE
    float* Ks = Qs + BR * QK_STRIDE;    // BC x QK_STRIDE
    float* Vs = Ks + BC * QK_STRIDE;    // BC x DV
    float* Ps = Vs + BC * DV;           // BR x PS_STRIDE

    const int tid = threadIdx.x, tx = tid % 16, ty = tid / 16;
    const int q0 = blockIdx.x * BR;     // first query row of the block
    const int v0 = blockIdx.y * DV;     // first output column of the block
    const bool q_resident = d <= DK;

    // Q is pre-multiplied by log2(e)/sqrt(d): scores come out in base-2 units for exp2f.
    if (q_resident) load_tile<BR, DK>(Qs, QK_STRIDE, Q, q0, M, 0, d, qscale);

    float m[ROWS_PER_THREAD], l[ROWS_PER_THREAD];  // running max, running sum (this thread's keys only)
    float o[ROWS_PER_THREAD][VGROUPS][4];          // unnormalised output
#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        m[i] = -INFINITY;
        l[i] = 0.0f;
#pragma unroll
        for (int g = 0; g < VGROUPS; ++g)
#pragma unroll
            for (int e = 0; e < 4; ++e) o[i][g][e] = 0.0f;
    }

    for (int k0 = 0; k0 < N; k0 += BC) {
        // ---- scores s[i][j] for rows ty + 16i, keys k0 + tx + 16j ----
        float s[ROWS_PER_THREAD][KEYS_PER_THREAD];
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i)
#pragma unroll
            for (int j = 0; j < KEYS_PER_THREAD; ++j) s[i][j] = 0.0f;

        for (int c0 = 0; c0 < d; c0 += DK) {
            if (!q_resident) load_tile<BR, DK>(Qs, QK_STRIDE, Q, q0, M, c0, d, qscale);
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
            __syncthreads();  // Qs/Ks are overwritten by the next chunk or tile
        }

        // V tile (keys k0.., columns v0..): every thread is past this tile's first barrier,
        // so nobody still reads Vs from the previous tile.
        load_tile<BC, DV>(Vs, DV, V, k0, N, v0, d, 1.0f);

        // ---- online softmax; P goes to shared memory for the P.V product ----
#pragma unroll
        for (int i = 0; i < ROWS_PER_THREAD; ++i) {
            float mt = -INFINITY;
#pragma unroll
            for (int j = 0; j < KEYS_PER_THREAD; ++j) {
                if (k0 + tx + 16 * j >= N) s[i][j] = -INFINITY;  // padded key: weight 0
                mt = fmaxf(mt, s[i][j]);
            }
            // the 16 threads of a row are 16 consecutive lanes
#pragma unroll
            for (int off = 8; off > 0; off >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
            const float m_new = fmaxf(m[i], mt);        // finite: every tile has a valid key
            const float alpha = exp2f(m[i] - m_new);    // 0 on the first tile (m = -inf)
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
            for (int g = 0; g < VGROUPS; ++g)
#pragma unroll
                for (int e = 0; e < 4; ++e) o[i][g][e] *= alpha;
        }
        __syncthreads();  // P and V tiles complete

        // ---- o += P.V ----
#pragma unroll 2
        for (int kk = 0; kk < BC; kk += 4) {
            float4 p4[ROWS_PER_THREAD];
#pragma unroll
            for (int i = 0; i < ROWS_PER_THREAD; ++i)
                p4[i] = *reinterpret_cast<const float4*>(&Ps[(ty + 16 * i) * PS_STRIDE + kk]);
#pragma unroll
            for (int u = 0; u < 4; ++u) {
#pragma unroll
                for (int g = 0; g < VGROUPS; ++g) {
                    const float4 v = *reinterpret_cast<const float4*>(&Vs[(kk + u) * DV + 64 * g + 4 * tx]);
#pragma unroll
                    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
                        const float p = u == 0 ? p4[i].x : u == 1 ? p4[i].y : u == 2 ? p4[i].z : p4[i].w;
                        o[i][g][0] = fmaf(p, v.x, o[i][g][0]);
                        o[i][g][1] = fmaf(p, v.y, o[i][g][1]);
                        o[i][g][2] = fmaf(p, v.z, o[i][g][2]);
                        o[i][g][3] = fmaf(p, v.w, o[i][g][3]);
                    }
                }
            }
        }
        // No barrier needed here: the next tile first writes Qs/Ks (not read above) and then
        // waits at a barrier before anything overwrites Vs or Ps.
    }

    // ---- normalise and store ----
#pragma unroll
    for (int i = 0; i < ROWS_PER_THREAD; ++i) {
        float sum = l[i];
#pragma unroll
        for (int off = 8; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        const float inv = 1.0f / sum;
        const int row = q0 + ty + 16 * i;
        if (row >= M) continue;
#pragma unroll
        for (int g = 0; g < VGROUPS; ++g)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const int col = v0 + 64 * g + 4 * tx + e;
                if (col < d) O[(size_t)row * d + col] = o[i][g][e] * inv;
            }
    }
}

// One entry point per head-dimension case (extern "C": names CuPy can look up without C++ mangling).
#define ENTRY(DK, DV)                                                                                      \
    extern "C" __global__ void __launch_bounds__(THREADS)                                                 \
    flash_##DK##_##DV(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V, \
                      float* __restrict__ O, int M, int N, int d, float qscale) {                         \
        flash_kernel<DK, DV>(Q, K, V, O, M, N, d, qscale);                                               \
    }
ENTRY(64, 64)
ENTRY(128, 128)
ENTRY(256, 256)
ENTRY(64, 128)
"""
BR = BC = 64
THREADS = 256
PS_STRIDE = BC + 16
CASES = [(64, 64, 64), (128, 128, 128), (256, 256, 256), (1024, 64, 128)]  # (largest d, DK, DV)
KERNELS = {(dk, dv): cupy.RawKernel(SOURCE, f"flash_{dk}_{dv}") for _, dk, dv in CASES}
LOG2E = 1.4426950408889634


def solve(Q: cupy.ndarray, K: cupy.ndarray, V: cupy.ndarray, output: cupy.ndarray, M: int, N: int, d: int) -> None:
    dk, dv = next((dk, dv) for largest, dk, dv in CASES if d <= largest)
    kernel = KERNELS[(dk, dv)]
    smem = 4 * ((BR + BC) * (dk + 4) + BC * dv + BR * PS_STRIDE)  # smem_floats<DK, DV>() in bytes
    kernel.max_dynamic_shared_size_bytes = smem
    qscale = cupy.float32(LOG2E / math.sqrt(d))
    grid = ((M + BR - 1) // BR, (d + dv - 1) // dv)
    kernel(grid, (THREADS,), (Q, K, V, output, cupy.int32(M), cupy.int32(N), cupy.int32(d), qscale), shared_mem=smem)
