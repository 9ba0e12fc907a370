// Rung 2 -- one pass over X and dY: rows in registers, each block's column sums kept in registers.
//
// Over rung 1: a block of THREADS threads works on a row at a time, thread t holding the packs
// t, t + THREADS, ... (float4 when N % 4 == 0 and the pointers are aligned) of X and dY in registers; the
// mean, the two-pass variance and the pair (sum g, sum g * xhat) are reduced with __shfl_xor_sync and once
// through shared memory, and dX is written from the registers. The grid holds as many blocks as fit on the
// GPU at once; block b takes rows b, b + blocks, ... and, since a thread owns the same columns in every row,
// it adds dY * xhat and dY for them into registers as it goes. X and dY therefore cross DRAM once (12 bytes
// per element with dX, the floor; PyTorch's two kernels read them twice). Each block then writes its
// partial column sums into scratch memory, and a second kernel adds the blocks' partials per column in a
// fixed order, so dgamma and dbeta do not depend on timing (float atomics would). Rows of more than 8192
// columns hold 16 floats of each input per thread, and some of them spill to local memory (L1).
#include <cuda_runtime.h>
#include <stdint.h>

constexpr float EPS = 1e-5f;
constexpr unsigned FULL = 0xffffffffu;

template <bool VEC> struct Pack;
template <> struct Pack<true> { using T = float4; static constexpr int W = 4; };
template <> struct Pack<false> { using T = float; static constexpr int W = 1; };

__device__ __forceinline__ float total(float v) { return v; }
__device__ __forceinline__ float total(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float4 operator*(float4 a, float4 b) { return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w); }
__device__ __forceinline__ float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ __forceinline__ float4 operator-(float4 a, float b) { return make_float4(a.x - b, a.y - b, a.z - b, a.w - b); }
__device__ __forceinline__ float4 operator*(float4 a, float b) { return make_float4(a.x * b, a.y * b, a.z * b, a.w * b); }
__device__ __forceinline__ float4 operator-(float4 a, float4 b) { return make_float4(a.x - b.x, a.y - b.y, a.z - b.z, a.w - b.w); }
__device__ __forceinline__ void zero(float& v) { v = 0.f; }
__device__ __forceinline__ void zero(float4& v) { v = make_float4(0.f, 0.f, 0.f, 0.f); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

// Block-wide sum of a pair; every thread gets it. `scratch` holds 33 float2. Safe to call again at once.
template <int THREADS>
__device__ __forceinline__ float2 block_sum(float2 v, float2* scratch) {
    constexpr int WARPS = THREADS / 32;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    v = make_float2(warp_sum(v.x), warp_sum(v.y));
    if (WARPS == 1) return v;
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < WARPS ? scratch[lane] : make_float2(0.f, 0.f);
        v = make_float2(warp_sum(v.x), warp_sum(v.y));
        if (lane == 0) scratch[32] = v;
    }
    __syncthreads();
    v = scratch[32];
    __syncthreads();
    return v;
}

// grid = blocks; partials: [blocks][2][N] (dgamma's, then dbeta's partial sums of this block's rows).
template <int THREADS, int PACKS, bool VEC>
__global__ void __launch_bounds__(THREADS) rows_with_partials(const float* __restrict__ in, const float* __restrict__ gamma,
                                                              const float* __restrict__ dY, float* __restrict__ dX,
                                                              float* __restrict__ partials, int M, int N) {
    using T = typename Pack<VEC>::T;
    __shared__ float2 scratch[33];
    const int n = N / Pack<VEC>::W, t = threadIdx.x;
    const T* gamma4 = reinterpret_cast<const T*>(gamma);
    T acc_gamma[PACKS], acc_beta[PACKS];
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        zero(acc_gamma[i]);
        zero(acc_beta[i]);
    }
    for (int row = blockIdx.x; row < M; row += gridDim.x) {
        const size_t at = (size_t)row * N;
        const T* x4 = reinterpret_cast<const T*>(in + at);
        const T* dy4 = reinterpret_cast<const T*>(dY + at);
        T x[PACKS], dy[PACKS];
        float s = 0.f;
#pragma unroll
        for (int i = 0; i < PACKS; ++i) {
            const int c = i * THREADS + t;
            if (c < n) {
                x[i] = __ldcs(x4 + c);
                dy[i] = __ldcs(dy4 + c);
            } else {
                zero(x[i]);
                zero(dy[i]);
            }
            s += total(x[i]);
        }
        const float mean = block_sum<THREADS>(make_float2(s, 0.f), scratch).x / N;
        float q = 0.f;
#pragma unroll
        for (int i = 0; i < PACKS; ++i)
            if (i * THREADS + t < n) {
                const T d = x[i] - mean;
                q += total(d * d);
            }
        const float rstd = rsqrtf(block_sum<THREADS>(make_float2(q, 0.f), scratch).x / N + EPS);
        float2 sums = make_float2(0.f, 0.f);  // (sum g, sum g * xhat); x[] becomes xhat
#pragma unroll
        for (int i = 0; i < PACKS; ++i) {
            const int c = i * THREADS + t;
            if (c < n) {
                x[i] = (x[i] - mean) * rstd;
                const T g = __ldg(gamma4 + c) * dy[i];
                sums.x += total(g);
                sums.y += total(g * x[i]);
                acc_gamma[i] = acc_gamma[i] + dy[i] * x[i];
                acc_beta[i] = acc_beta[i] + dy[i];
            }
        }
        sums = block_sum<THREADS>(sums, scratch);
        const float mean_g = sums.x / N, mean_gx = sums.y / N;
        T* dx4 = reinterpret_cast<T*>(dX + at);
#pragma unroll
        for (int i = 0; i < PACKS; ++i) {
            const int c = i * THREADS + t;
            if (c < n) __stcs(dx4 + c, ((__ldg(gamma4 + c) * dy[i] - mean_g) - x[i] * mean_gx) * rstd);
        }
    }
    T* mine = reinterpret_cast<T*>(partials + (size_t)blockIdx.x * 2 * N);
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * THREADS + t;
        if (c < n) {
            mine[c] = acc_gamma[i];
            mine[n + c] = acc_beta[i];
        }
    }
}

// One thread per output column (dgamma's N, then dbeta's N): the blocks' partials added in order.
__global__ void add_partials(const float* __restrict__ partials, float* __restrict__ dgamma, float* __restrict__ dbeta,
                             int N, int blocks) {
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= 2 * N) return;
    float s = 0.f;
    for (int b = 0; b < blocks; ++b) s += partials[(size_t)b * 2 * N + c];
    if (c < N) dgamma[c] = s;
    else dbeta[c - N] = s;
}

// Scratch for the partial column sums, grown when a larger call comes (kept between calls).
static float* partials_for(size_t count) {
    static float* buffer = nullptr;
    static size_t capacity = 0;
    if (count > capacity) {
        cudaFree(buffer);
        cudaMalloc(&buffer, count * sizeof(float));
        capacity = count;
    }
    return buffer;
}

template <int THREADS, int PACKS, bool VEC>
static void launch(const float* in, const float* gamma, const float* dY, float* dX, float* dgamma, float* dbeta, int M,
                   int N) {
    static int resident = 0;  // blocks of this kernel the whole GPU holds at once
    if (resident == 0) {
        int device = 0, sms = 0, per_sm = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, rows_with_partials<THREADS, PACKS, VEC>, THREADS, 0);
        resident = sms * (per_sm > 0 ? per_sm : 1);
    }
    const int blocks = M < resident ? M : resident;
    float* partials = partials_for((size_t)blocks * 2 * N);
    rows_with_partials<THREADS, PACKS, VEC><<<blocks, THREADS>>>(in, gamma, dY, dX, partials, M, N);
    add_partials<<<(2 * N + 255) / 256, 256>>>(partials, dgamma, dbeta, N, blocks);
}

// 8 floats of each input per thread (16 beyond 8192 columns), in the smallest block that holds the row.
template <bool VEC>
static void dispatch(const float* in, const float* g, const float* dY, float* dX, float* dg, float* db, int M, int N) {
    constexpr int P8 = 8 / Pack<VEC>::W, P16 = 16 / Pack<VEC>::W;
    if (N <= 32 * 8)          launch<32, P8, VEC>(in, g, dY, dX, dg, db, M, N);
    else if (N <= 128 * 8)    launch<128, P8, VEC>(in, g, dY, dX, dg, db, M, N);
    else if (N <= 256 * 8)    launch<256, P8, VEC>(in, g, dY, dX, dg, db, M, N);
    else if (N <= 512 * 8)    launch<512, P8, VEC>(in, g, dY, dX, dg, db, M, N);
    else if (N <= 1024 * 8)   launch<1024, P8, VEC>(in, g, dY, dX, dg, db, M, N);
    else                      launch<1024, P16, VEC>(in, g, dY, dX, dg, db, M, N);
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, const float* gamma, const float* dY, float* dX, float* dgamma, float* dbeta,
                      int M, int N) {
    if (N % 4 == 0 && aligned16(input) && aligned16(gamma) && aligned16(dY) && aligned16(dX) && aligned16(dgamma) &&
        aligned16(dbeta))
        dispatch<true>(input, gamma, dY, dX, dgamma, dbeta, M, N);
    else
        dispatch<false>(input, gamma, dY, dX, dgamma, dbeta, M, N);
}
