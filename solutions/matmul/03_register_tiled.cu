// Rung 3 -- register-blocked 2-D tiling with float4 loads.
//
// Over rung 2: each thread now computes an 8x8 block of C instead of one
// value. Per k step it reads 8 values of A and 8 of B from shared memory
// (as float4s) and does 64 FMAs with them, so shared-memory traffic per FMA
// drops 8x and the loop becomes FMA-bound. A block of 16x16 threads covers
// a 128x128 tile of C; A is stored transposed (k-major) in shared memory so
// both operands are read as contiguous float4s. Global loads are float4 when
// the rows are 16-byte aligned (K % 4 == 0 for A, N % 4 == 0 for B and C)
// and fall back to bounds-checked scalar loads otherwise; out-of-range
// elements are zero-filled, so every M, N, K in 1..8192 is correct.

#include <cuda_runtime.h>
#include <cstdint>

constexpr int BM = 128;  // block tile rows (M)
constexpr int BN = 128;  // block tile cols (N)
constexpr int BK = 8;    // block tile depth (K)
constexpr int TM = 8;    // outputs per thread along M
constexpr int TN = 8;    // outputs per thread along N
constexpr int THREADS = (BM / TM) * (BN / TN);  // 256
constexpr int PAD_A = 4; // keeps the transposed stores of A conflict-free, float4-aligned

// The block's 256 threads load exactly one float4 of A and one of B per tile.
static_assert(BM * BK == 4 * THREADS && BK * BN == 4 * THREADS, "load mapping");

// Thread (tx, ty) owns rows {ty*4 + i, BM/2 + ty*4 + i} and columns
// {tx*4 + j, BN/2 + tx*4 + j}, i, j in 0..3. Splitting each thread's 8 rows
// (cols) into two groups of 4 makes a warp's float4 reads of Bs contiguous
// (no bank conflicts) and its reads of As broadcasts.
template <bool VEC_A, bool VEC_B>
__global__ void __launch_bounds__(THREADS)
matmul_register_tiled(const float* __restrict__ A, const float* __restrict__ B,
                      float* __restrict__ C, int M, int N, int K) {
    __shared__ __align__(16) float As[BK][BM + PAD_A];  // As[k][m] = A[m0+m][k0+k]
    __shared__ __align__(16) float Bs[BK][BN];          // Bs[k][n] = B[k0+k][n0+n]

    const int tid = threadIdx.x;
    const int tx = tid % (BN / TN);  // 0..15
    const int ty = tid / (BN / TN);  // 0..15
    const int m0 = blockIdx.y * BM;
    const int n0 = blockIdx.x * BN;

    // Load mapping: A tile is 128 rows x 8 k (2 float4 per row),
    //               B tile is 8 k x 128 cols (32 float4 per row).
    const int a_row = tid / 2, a_k = (tid % 2) * 4;
    const int b_k = tid / 32,  b_col = (tid % 32) * 4;
    const bool a_row_ok = (m0 + a_row) < M;
    const float* a_ptr = A + (size_t)(m0 + a_row) * K;  // only dereferenced when a_row_ok

    float acc[TM][TN] = {};

    for (int k0 = 0; k0 < K; k0 += BK) {
        // ---- global -> shared, zero-filled outside the matrix ----
        float4 a = make_float4(0.f, 0.f, 0.f, 0.f);
        const int ak = k0 + a_k;
        if (VEC_A) {  // K % 4 == 0: the 4 values are all in range or all out
            if (a_row_ok && ak < K) a = *reinterpret_cast<const float4*>(a_ptr + ak);
        } else if (a_row_ok) {
            if (ak + 0 < K) a.x = a_ptr[ak + 0];
            if (ak + 1 < K) a.y = a_ptr[ak + 1];
            if (ak + 2 < K) a.z = a_ptr[ak + 2];
            if (ak + 3 < K) a.w = a_ptr[ak + 3];
        }
        As[a_k + 0][a_row] = a.x;  // transpose into k-major layout
        As[a_k + 1][a_row] = a.y;
        As[a_k + 2][a_row] = a.z;
        As[a_k + 3][a_row] = a.w;

        float4 b = make_float4(0.f, 0.f, 0.f, 0.f);
        const int bk = k0 + b_k, bn = n0 + b_col;
        if (bk < K) {
            const float* b_ptr = B + (size_t)bk * N + bn;
            if (VEC_B) {  // N % 4 == 0: all 4 columns in range or all out
                if (bn < N) b = *reinterpret_cast<const float4*>(b_ptr);
            } else {
                if (bn + 0 < N) b.x = b_ptr[0];
                if (bn + 1 < N) b.y = b_ptr[1];
                if (bn + 2 < N) b.z = b_ptr[2];
                if (bn + 3 < N) b.w = b_ptr[3];
            }
        }
        *reinterpret_cast<float4*>(&Bs[b_k][b_col]) = b;
        __syncthreads();

        // ---- 8x8 outer products from shared memory ----
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float ra[TM], rb[TN];
            *reinterpret_cast<float4*>(&ra[0]) = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
            *reinterpret_cast<float4*>(&ra[4]) = *reinterpret_cast<const float4*>(&As[k][BM / 2 + ty * 4]);
            *reinterpret_cast<float4*>(&rb[0]) = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
            *reinterpret_cast<float4*>(&rb[4]) = *reinterpret_cast<const float4*>(&Bs[k][BN / 2 + tx * 4]);
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j)
                    acc[i][j] += ra[i] * rb[j];
        }
        __syncthreads();  // shared tiles are overwritten in the next iteration
    }

    // ---- registers -> C, bounds-checked ----
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int row = m0 + (i < 4 ? ty * 4 + i : BM / 2 + ty * 4 + (i - 4));
        if (row >= M) continue;
        float* c_row = C + (size_t)row * N;
#pragma unroll
        for (int h = 0; h < 2; ++h) {  // the two groups of 4 columns
            const int col = n0 + h * (BN / 2) + tx * 4;
            const float* v = &acc[i][h * 4];
            if (VEC_B) {  // N % 4 == 0: all 4 in range or all out
                if (col < N) *reinterpret_cast<float4*>(c_row + col) = make_float4(v[0], v[1], v[2], v[3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; ++j)
                    if (col + j < N) c_row[col + j] = v[j];
            }
        }
    }
}

static bool aligned16(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 15) == 0; }

void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    // float4 access needs every row start 16-byte aligned.
    const bool vec_a = (K % 4 == 0) && aligned16(A);
    const bool vec_b = (N % 4 == 0) && aligned16(B) && aligned16(C);
    dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
    dim3 block(THREADS);
    if (vec_a && vec_b)  matmul_register_tiled<true,  true ><<<grid, block>>>(A, B, C, M, N, K);
    else if (vec_a)      matmul_register_tiled<true,  false><<<grid, block>>>(A, B, C, M, N, K);
    else if (vec_b)      matmul_register_tiled<false, true ><<<grid, block>>>(A, B, C, M, N, K);
    else                 matmul_register_tiled<false, false><<<grid, block>>>(A, B, C, M, N, K);
}
