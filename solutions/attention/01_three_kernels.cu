// Rung 1 -- three kernels, the scores written out in full.
//
// The textbook formula, one kernel per step: (1) S = Q.K^T / sqrt(d), a
// shared-memory tiled matrix product (32x32 tiles, one output per thread)
// into an MxN scratch matrix; (2) a row softmax of S in place, one block per
// row (max, then exponentials and their sum, then the division); (3) O = S.V,
// another tiled product. Simple and obviously right, but S crosses device
// memory six times (written, read three times and rewritten twice by the
// softmax, read by P.V) and the products reuse each loaded value only 32
// times. When MxN floats would not fit in the scratch limit, Q is processed in
// chunks of rows. Every later rung must agree with this one.

#include <cuda_runtime.h>

#include <math.h>

constexpr int TILE = 32;                                  // products: TILE x TILE threads, one output each
constexpr int SOFTMAX_THREADS = 256;                      // softmax: threads per row
constexpr size_t SCRATCH_LIMIT_FLOATS = size_t(1) << 28;  // at most 1 GiB of scores at a time

// S[i][j] = scale * sum_k Q[i][k] * K[j][k] for the `rows` rows of this chunk.
__global__ void scores_kernel(const float* __restrict__ Q, const float* __restrict__ K, float* __restrict__ S,
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
__global__ void __launch_bounds__(SOFTMAX_THREADS) softmax_rows_kernel(float* __restrict__ S, int N) {
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
__global__ void pv_kernel(const float* __restrict__ P, const float* __restrict__ V, float* __restrict__ O,
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

void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    const float scale = (float)(1.0 / sqrt((double)d));
    size_t chunk = SCRATCH_LIMIT_FLOATS / (size_t)N;  // query rows whose scores fit the limit
    if (chunk < 1) chunk = 1;
    if (chunk > (size_t)M) chunk = M;
    const int chunk_rows = (int)chunk;

    float* S = nullptr;
    if (cudaMalloc(&S, (size_t)chunk_rows * N * sizeof(float)) != cudaSuccess) return;

    const dim3 block(TILE, TILE);
    for (int r0 = 0; r0 < M; r0 += chunk_rows) {
        const int rows = (M - r0 < chunk_rows) ? M - r0 : chunk_rows;
        const float* Qc = Q + (size_t)r0 * d;
        float* Oc = output + (size_t)r0 * d;
        const dim3 grid_s((N + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
        scores_kernel<<<grid_s, block>>>(Qc, K, S, rows, N, d, scale);
        softmax_rows_kernel<<<rows, SOFTMAX_THREADS>>>(S, N);
        const dim3 grid_o((d + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
        pv_kernel<<<grid_o, block>>>(S, V, Oc, rows, N, d);
    }
    cudaFree(S);  // synchronises, so the chunks are finished before the scratch goes
}
