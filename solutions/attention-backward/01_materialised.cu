// Rung 1 -- attention backward with P materialised: one simple kernel per formula.
//
// With an S x S scratch matrix per head (grown on demand, kept across calls):
// scores -> row softmax gives P; O = P V; Delta_i = dO_i . O_i; dV = P^T dO;
// dS = P * (dO V^T - Delta) overwrites P; dQ = dS K / sqrt(D); dK = dS^T Q / sqrt(D).
// Every kernel gives one thread one output element (the softmax one warp per
// row) and walks a grid-stride loop over 64-bit indices; threads that share a
// row or column of P read it as a broadcast. Easy to check against the formulas,
// but the S x S matrix crosses memory about six times: the baseline for the
// flash rung, which never writes it.

#include <cuda_runtime.h>

#include <math.h>

constexpr int THREADS = 256;
constexpr unsigned MAX_BLOCKS = 65535u * 16u;  // grid-stride loops cover the rest

static unsigned blocks_for(size_t work) {
    const size_t blocks = (work + THREADS - 1) / THREADS;
    return blocks < MAX_BLOCKS ? (unsigned)blocks : MAX_BLOCKS;
}

#define GRID_STRIDE(idx, count) \
    for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < (count); idx += (size_t)gridDim.x * blockDim.x)

// P[h][i][j] = scale * Q_i . K_j
__global__ void scores(const float* __restrict__ Q, const float* __restrict__ K, float* __restrict__ P, size_t heads,
                       int S, int D, float scale) {
    GRID_STRIDE(idx, heads * S * S) {
        const size_t j = idx % S, hi = idx / S, h = hi / S;  // hi = h * S + i
        const float* q = Q + hi * D;
        const float* k = K + (h * S + j) * D;
        float dot = 0.0f;
        for (int c = 0; c < D; ++c) dot = fmaf(q[c], k[c], dot);
        P[idx] = dot * scale;
    }
}

// Each row of P: subtract the max, exponentiate, divide by the sum. One warp per row.
__global__ void softmax_rows(float* __restrict__ P, size_t rows, int S) {
    const size_t warps = (size_t)gridDim.x * blockDim.x / 32;
    const int lane = threadIdx.x % 32;
    for (size_t row = ((size_t)blockIdx.x * blockDim.x + threadIdx.x) / 32; row < rows; row += warps) {
        float* p = P + row * S;
        float mx = -INFINITY;
        for (int j = lane; j < S; j += 32) mx = fmaxf(mx, p[j]);
        for (int off = 16; off > 0; off >>= 1) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, off));
        float sum = 0.0f;
        for (int j = lane; j < S; j += 32) sum += (p[j] = expf(p[j] - mx));
        for (int off = 16; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
        const float inv = 1.0f / sum;
        for (int j = lane; j < S; j += 32) p[j] *= inv;
    }
}

// out[h][i][c] = scale * sum_j A[h][i][j] * X[h][j][c]   (O = P V, dQ = dS K / sqrt(D))
__global__ void rows_times(const float* __restrict__ A, const float* __restrict__ X, float* __restrict__ out,
                           size_t heads, int S, int D, float scale) {
    GRID_STRIDE(idx, heads * S * D) {
        const size_t c = idx % D, hi = idx / D, h = hi / S;
        const float* a = A + hi * S;
        const float* x = X + h * S * D + c;
        float acc = 0.0f;
        for (int j = 0; j < S; ++j) acc = fmaf(a[j], x[(size_t)j * D], acc);
        out[idx] = acc * scale;
    }
}

// out[h][j][c] = scale * sum_i A[h][i][j] * X[h][i][c]   (dV = P^T dO, dK = dS^T Q / sqrt(D))
__global__ void columns_times(const float* __restrict__ A, const float* __restrict__ X, float* __restrict__ out,
                              size_t heads, int S, int D, float scale) {
    GRID_STRIDE(idx, heads * S * D) {
        const size_t c = idx % D, hj = idx / D, h = hj / S, j = hj % S;
        const float* a = A + h * S * S + j;
        const float* x = X + h * S * D + c;
        float acc = 0.0f;
        for (int i = 0; i < S; ++i) acc = fmaf(a[(size_t)i * S], x[(size_t)i * D], acc);
        out[idx] = acc * scale;
    }
}

// delta[h][i] = dO_i . O_i
__global__ void row_dots(const float* __restrict__ dO, const float* __restrict__ O, float* __restrict__ delta,
                         size_t rows, int D) {
    GRID_STRIDE(row, rows) {
        float acc = 0.0f;
        for (int c = 0; c < D; ++c) acc = fmaf(dO[row * D + c], O[row * D + c], acc);
        delta[row] = acc;
    }
}

// P[h][i][j] <- dS = P * (dO_i . V_j - delta_i)
__global__ void scores_gradient(float* __restrict__ P, const float* __restrict__ dO, const float* __restrict__ V,
                                const float* __restrict__ delta, size_t heads, int S, int D) {
    GRID_STRIDE(idx, heads * S * S) {
        const size_t j = idx % S, hi = idx / S, h = hi / S;
        const float* d_o = dO + hi * D;
        const float* v = V + (h * S + j) * D;
        float dp = 0.0f;
        for (int c = 0; c < D; ++c) dp = fmaf(d_o[c], v[c], dp);
        P[idx] *= dp - delta[hi];
    }
}

// Scratch: P (heads x S x S), O (heads x S x D), delta (heads x S); grown on demand, never shrunk.
static float* g_scratch = nullptr;
static size_t g_scratch_floats = 0;

void solve(const float* Q, const float* K, const float* V, const float* dO, float* grads, int B, int H, int S,
           int D) {
    const size_t heads = (size_t)B * H, rows = heads * S, total = rows * D;
    const size_t need = heads * S * S + total + rows;
    if (need > g_scratch_floats) {
        if (g_scratch) cudaFree(g_scratch);
        g_scratch = nullptr;
        g_scratch_floats = 0;
        if (cudaMalloc(&g_scratch, need * sizeof(float)) != cudaSuccess) return;
        g_scratch_floats = need;
    }
    float* P = g_scratch;
    float* O = P + heads * S * S;
    float* delta = O + total;
    float* dQ = grads;
    float* dK = grads + total;
    float* dV = grads + 2 * total;
    const float scale = 1.0f / sqrtf((float)D);

    scores<<<blocks_for(heads * S * S), THREADS>>>(Q, K, P, heads, S, D, scale);
    softmax_rows<<<blocks_for(rows * 32), THREADS>>>(P, rows, S);
    rows_times<<<blocks_for(total), THREADS>>>(P, V, O, heads, S, D, 1.0f);
    row_dots<<<blocks_for(rows), THREADS>>>(dO, O, delta, rows, D);
    columns_times<<<blocks_for(total), THREADS>>>(P, dO, dV, heads, S, D, 1.0f);
    scores_gradient<<<blocks_for(heads * S * S), THREADS>>>(P, dO, V, delta, heads, S, D);
    rows_times<<<blocks_for(total), THREADS>>>(P, K, dQ, heads, S, D, scale);
    columns_times<<<blocks_for(total), THREADS>>>(P, Q, dK, heads, S, D, scale);
}
