// Rung 2 — the row read once into registers, coalesced float4 loads, shuffle reductions, exact two-pass.
//
// Over rung 1: the threads sharing a row read consecutive addresses (float4 when N % 4 == 0 and the
// pointers are aligned), so every access is coalesced, and the row is held in registers between the three
// steps: it crosses DRAM once in and once out, the floor for this problem. Because the values stay in
// registers, the variance is the exact two-pass sum((x - mean)^2) at no extra memory cost (no Welford or
// E[x^2] - E[x]^2 needed). Sums are reduced with __shfl_xor_sync (and, across warps, once through shared
// memory). The work per row decides the shape:
//   N <= 32 * 4 * 16  a warp per row, 8 rows per block, no __syncthreads at all
//   N <= 256 * 4 * 16 a 256-thread block per row, the row in registers
//   longer            a 1024-thread block per row streams the row: sum, squared deviations, write
//                     (the re-reads of a row of up to 4 MB mostly hit L2)
#include <cuda_runtime.h>
#include <stdint.h>

constexpr float EPS = 1e-5f;
constexpr unsigned FULL = 0xffffffffu;

template <bool VEC> struct Pack;
template <> struct Pack<true> { using T = float4; static constexpr int W = 4; };
template <> struct Pack<false> { using T = float; static constexpr int W = 1; };

__device__ __forceinline__ float pack_sum(float v) { return v; }
__device__ __forceinline__ float pack_sum(float4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ float pack_sq_dev(float v, float m) { return (v - m) * (v - m); }
__device__ __forceinline__ float pack_sq_dev(float4 v, float m) {
    return ((v.x - m) * (v.x - m) + (v.y - m) * (v.y - m)) + ((v.z - m) * (v.z - m) + (v.w - m) * (v.w - m));
}
__device__ __forceinline__ float normalise(float v, float m, float r, float g, float b) { return (v - m) * r * g + b; }
__device__ __forceinline__ float4 normalise(float4 v, float m, float r, float4 g, float4 b) {
    return make_float4((v.x - m) * r * g.x + b.x, (v.y - m) * r * g.y + b.y, (v.z - m) * r * g.z + b.z,
                       (v.w - m) * r * g.w + b.w);
}
__device__ __forceinline__ void zero(float& v) { v = 0.f; }
__device__ __forceinline__ void zero(float4& v) { v = make_float4(0.f, 0.f, 0.f, 0.f); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

// The reductions are passed to normalise_row as functors (not function pointers), so they inline.
struct WarpSum {
    __device__ __forceinline__ float operator()(float v) const { return warp_sum(v); }
};

// Block-wide sum; every thread gets it. `scratch` holds 33 floats. Safe to call twice in a row.
__device__ __forceinline__ float block_sum(float v, float* scratch) {
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
    v = warp_sum(v);
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_sum(lane < warps ? scratch[lane] : 0.f);
        if (lane == 0) scratch[32] = v;
    }
    __syncthreads();
    v = scratch[32];
    __syncthreads();
    return v;
}

// A row of n packs held by `lanes` threads, PACKS packs each: pack i*lanes + t. REDUCE sums over the lanes.
template <int PACKS, bool VEC, class Reduce>
__device__ __forceinline__ void normalise_row(const float* __restrict__ x, const float* __restrict__ gamma,
                                              const float* __restrict__ beta, float* __restrict__ y, int N, int t,
                                              int lanes, Reduce reduce) {
    using T = typename Pack<VEC>::T;
    const int n = N / Pack<VEC>::W;
    const T* x4 = reinterpret_cast<const T*>(x);
    T v[PACKS];
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * lanes + t;
        if (c < n) v[i] = __ldcs(x4 + c);
        else zero(v[i]);
        s += pack_sum(v[i]);
    }
    const float mean = reduce(s) / N;
    float q = 0.f;
#pragma unroll
    for (int i = 0; i < PACKS; ++i)
        if (i * lanes + t < n) q += pack_sq_dev(v[i], mean);
    const float rstd = rsqrtf(reduce(q) / N + EPS);
    const T* g4 = reinterpret_cast<const T*>(gamma);
    const T* b4 = reinterpret_cast<const T*>(beta);
    T* y4 = reinterpret_cast<T*>(y);
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * lanes + t;
        if (c < n) __stcs(y4 + c, normalise(v[i], mean, rstd, __ldg(g4 + c), __ldg(b4 + c)));
    }
}

constexpr int WARP_ROWS = 8;  // rows per 256-thread block on the warp path

template <int PACKS, bool VEC>
__global__ void __launch_bounds__(32 * WARP_ROWS) ln_warp_rows(const float* __restrict__ in, const float* __restrict__ gamma,
                                                               const float* __restrict__ beta, float* __restrict__ out,
                                                               int M, int N) {
    const int row = blockIdx.x * WARP_ROWS + threadIdx.x / 32;
    if (row >= M) return;  // uniform over the warp
    const size_t offset = (size_t)row * N;
    normalise_row<PACKS, VEC>(in + offset, gamma, beta, out + offset, N, threadIdx.x % 32, 32, WarpSum());
}

constexpr int BLOCK_THREADS = 256;

template <int PACKS, bool VEC>
__global__ void __launch_bounds__(BLOCK_THREADS) ln_block_rows(const float* __restrict__ in, const float* __restrict__ gamma,
                                                               const float* __restrict__ beta, float* __restrict__ out,
                                                               int N) {
    __shared__ float scratch[33];
    const size_t offset = (size_t)blockIdx.x * N;
    normalise_row<PACKS, VEC>(in + offset, gamma, beta, out + offset, N, threadIdx.x, BLOCK_THREADS,
                              [&](float v) { return block_sum(v, scratch); });
}

constexpr int STREAM_THREADS = 1024;

template <bool VEC>
__global__ void __launch_bounds__(STREAM_THREADS) ln_stream_rows(const float* __restrict__ in, const float* __restrict__ gamma,
                                                                 const float* __restrict__ beta, float* __restrict__ out,
                                                                 int N) {
    using T = typename Pack<VEC>::T;
    __shared__ float scratch[33];
    const size_t offset = (size_t)blockIdx.x * N;
    const T* x4 = reinterpret_cast<const T*>(in + offset);
    T* y4 = reinterpret_cast<T*>(out + offset);
    const int n = N / Pack<VEC>::W, t = threadIdx.x;
    float s = 0.f;
    for (int c = t; c < n; c += STREAM_THREADS) s += pack_sum(x4[c]);
    const float mean = block_sum(s, scratch) / N;
    float q = 0.f;
    for (int c = t; c < n; c += STREAM_THREADS) q += pack_sq_dev(x4[c], mean);
    const float rstd = rsqrtf(block_sum(q, scratch) / N + EPS);
    const T* g4 = reinterpret_cast<const T*>(gamma);
    const T* b4 = reinterpret_cast<const T*>(beta);
    for (int c = t; c < n; c += STREAM_THREADS) __stcs(y4 + c, normalise(__ldcs(x4 + c), mean, rstd, g4[c], b4[c]));
}

template <int PACKS, bool VEC>
static void warp_rows(const float* in, const float* g, const float* b, float* out, int M, int N) {
    ln_warp_rows<PACKS, VEC><<<(M + WARP_ROWS - 1) / WARP_ROWS, 32 * WARP_ROWS>>>(in, g, b, out, M, N);
}

template <bool VEC>
static void dispatch(const float* in, const float* g, const float* b, float* out, int M, int N) {
    const int packs = N / Pack<VEC>::W;  // per row
    if (packs <= 32 * 1)           warp_rows<1, VEC>(in, g, b, out, M, N);
    else if (packs <= 32 * 2)      warp_rows<2, VEC>(in, g, b, out, M, N);
    else if (packs <= 32 * 4)      warp_rows<4, VEC>(in, g, b, out, M, N);
    else if (packs <= 32 * 8)      warp_rows<8, VEC>(in, g, b, out, M, N);
    else if (packs <= 32 * 16)     warp_rows<16, VEC>(in, g, b, out, M, N);
    else if (packs <= BLOCK_THREADS * 4)  ln_block_rows<4, VEC><<<M, BLOCK_THREADS>>>(in, g, b, out, N);
    else if (packs <= BLOCK_THREADS * 8)  ln_block_rows<8, VEC><<<M, BLOCK_THREADS>>>(in, g, b, out, N);
    else if (packs <= BLOCK_THREADS * 16) ln_block_rows<16, VEC><<<M, BLOCK_THREADS>>>(in, g, b, out, N);
    else ln_stream_rows<VEC><<<M, STREAM_THREADS>>>(in, g, b, out, N);
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, const float* gamma, const float* beta, float* output, int M, int N) {
    if (N % 4 == 0 && aligned16(input) && aligned16(gamma) && aligned16(beta) && aligned16(output))
        dispatch<true>(input, gamma, beta, output, M, N);
    else
        dispatch<false>(input, gamma, beta, output, M, N);
}
