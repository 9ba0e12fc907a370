# Rung 1 (CuPy) -- 01_three_kernels.cu's kernels as cupy.RawKernels: S = Q.K^T/sqrt(d), a row softmax, S.V.
#
# The same kernel text as the CUDA rung, compiled by NVRTC at the first call: a 32x32-tiled product writes the
# scores into an MxN scratch array (cupy.empty), one block per row turns them into probabilities in place, and a
# second tiled product multiplies them by V. The scores cross device memory six times; when M x N floats
# would pass 2^28 (1 GiB), the queries go in chunks of rows. The next rung never writes the scores.
import math

import cupy

SOURCE = r"""
#ifndef INFINITY  // NVRTC defines no INFINITY (nvcc gets it from math.h)
#define INFINITY __int_as_float(0x7f800000)
#endif
constexpr int TILE = 32;                                  // products: TILE x TILE threads, one output each
constexpr int SOFTMAX_THREADS = 256;                      // softmax: threads per row

// S[i][j] = scale * sum_k Q[i][k] * K[j][k] for the `rows` rows of this chunk.
extern "C" __global__ void scores_kernel(const float* __restrict__ Q, const float* __restrict__ K, float* __restrict__ S,
                              int rows, int N, int d, float scale) {
    __shared__ float Qs[TILE][TILE];
    __shared__ float Kt[TILE][TILE + 1];  // transposed K tile; +1 keeps the transposing store conflict-free

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;   // query row of this thread's output
    const int col = blockIdx.x * TILE + tx;   // key of this thread's output
    const int krow = blockIdx.x * TILE + ty;  // key row this thread loads

    float acc = 0.0f;
    for (int k0 = 0; k0 < d; k0 += TILE) {
        const int k = k0 + tx;  // head-dimension index this thread loads (coalesced)
        Qs[ty][tx] = (row < rows && k < d) ? Q[(size_t)row * d + k] : 0.0f;
        Kt[tx][ty] = (krow < N && k < d) ? K[(size_t)krow * d + k] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < TILE; ++kk) acc += Qs[ty][kk] * Kt[kk][tx];
        __syncthreads();
    }
    if (row < rows && col < N) S[(size_t)row * N + col] = acc * scale;
}

// Reduces v over the whole block (max or sum); `red` holds one value per warp.
__device__ float block_reduce(float v, bool is_max, float* red) {
    for (int off = 16; off > 0; off >>= 1) {
        float other = __shfl_xor_sync(0xffffffffu, v, off);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0) red[warp] = v;
    __syncthreads();
    v = red[0];
    for (int w = 1; w < SOFTMAX_THREADS / 32; ++w) v = is_max ? fmaxf(v, red[w]) : v + red[w];
    __syncthreads();  // `red` is reused by the next reduction
    return v;
}

// One block per row of S: S[row][:] = softmax(S[row][:]).
extern "C" __global__ void __launch_bounds__(SOFTMAX_THREADS) softmax_rows_kernel(float* __restrict__ S, int N) {
    __shared__ float red[SOFTMAX_THREADS / 32];
    float* row = S + (size_t)blockIdx.x * N;

    float mx = -INFINITY;
    for (int j = threadIdx.x; j < N; j += SOFTMAX_THREADS) mx = fmaxf(mx, row[j]);
    mx = block_reduce(mx, true, red);

    float sum = 0.0f;
    for (int j = threadIdx.x; j < N; j += SOFTMAX_THREADS) {
        float e = expf(row[j] - mx);
        row[j] = e;
        sum += e;
    }
    sum = block_reduce(sum, false, red);

    const float inv = 1.0f / sum;
    for (int j = threadIdx.x; j < N; j += SOFTMAX_THREADS) row[j] *= inv;
}

// O[i][c] = sum_j P[i][j] * V[j][c] for the `rows` rows of this chunk.
extern "C" __global__ void pv_kernel(const float* __restrict__ P, const float* __restrict__ V, float* __restrict__ O,
                          int rows, int N, int d) {
    __shared__ float Ps[TILE][TILE];
    __shared__ float Vs[TILE][TILE];

    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * TILE + ty;  // query row
    const int col = blockIdx.x * TILE + tx;  // output column

    float acc = 0.0f;
    for (int j0 = 0; j0 < N; j0 += TILE) {
        const int pj = j0 + tx, vj = j0 + ty;
        Ps[ty][tx] = (row < rows && pj < N) ? P[(size_t)row * N + pj] : 0.0f;
        Vs[ty][tx] = (vj < N && col < d) ? V[(size_t)vj * d + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int jj = 0; jj < TILE; ++jj) acc += Ps[ty][jj] * Vs[jj][tx];
        __syncthreads();
    }
    if (row < rows && col < d) O[(size_t)row * d + col] = acc;
}
"""
SCORES = cupy.RawKernel(SOURCE, "scores_kernel")
SOFTMAX = cupy.RawKernel(SOURCE, "softmax_rows_kernel")
PV = cupy.RawKernel(SOURCE, "pv_kernel")
TILE = 32
SOFTMAX_THREADS = 256
SCRATCH_LIMIT_FLOATS = 1 << 28  # at most 1 GiB of scores at a time


def solve(Q: cupy.ndarray, K: cupy.ndarray, V: cupy.ndarray, output: cupy.ndarray, M: int, N: int, d: int) -> None:
    scale = cupy.float32(1.0 / math.sqrt(d))
    chunk_rows = min(M, max(1, SCRATCH_LIMIT_FLOATS // N))
    S = cupy.empty((chunk_rows * N,), dtype=cupy.float32)
    for r0 in range(0, M, chunk_rows):
        rows = min(M - r0, chunk_rows)
        Qc, Oc = Q[r0 : r0 + rows], output[r0 : r0 + rows]  # row slices: views, contiguous
        grid_s = ((N + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
        SCORES(grid_s, (TILE, TILE), (Qc, K, S, cupy.int32(rows), cupy.int32(N), cupy.int32(d), scale))
        SOFTMAX((rows,), (SOFTMAX_THREADS,), (S, cupy.int32(N)))
        grid_o = ((d + TILE - 1) // TILE, (rows + TILE - 1) // TILE)
        PV(grid_o, (TILE, TILE), (S, V, Oc, cupy.int32(rows), cupy.int32(N), cupy.int32(d)))
