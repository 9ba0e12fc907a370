// Rung 4 — online softmax, float4, strategy chosen by shape.
//
// Over rung 3: a thread's values are summarised as one pair (m, d) = (max, sum of exp(x - m));
// pairs merge as m = max(m1, m2), d = d1*exp(m1-m) + d2*exp(m2-m). One reduction of pairs replaces the
// max and sum passes, so the input is read twice (stats, write) or, if the row fits in registers, once.
//   N <= 1024          a warp (1..16 lanes for tiny rows) per row, row in registers
//   N <= 32768         a block of 128..1024 threads per row, 32 floats per thread in registers
//   longer, M >= #SMs  a 1024-thread block per row: online stats pass, then a write pass (re-read from L2)
//   longer, M <  #SMs  rows split into 4096-float chunks: kernel 1 writes each chunk's (m, d), kernel 2
//                      merges a row's chunks and writes it. float4 accesses when N % 4 == 0 and both
//                      pointers are 16-byte aligned, scalar otherwise.
#include <cuda_runtime.h>
#include <stdint.h>
#include <math.h>

constexpr int WARP = 32;
constexpr unsigned FULL_MASK = 0xffffffffu;
constexpr int REG_FLOATS = 32;                        // floats per thread kept in registers
constexpr int WARP_ROW_MAX_N = WARP * REG_FLOATS;     // 1024
constexpr int WARP_KERNEL_THREADS = 128;
constexpr int BLOCK_ROW_MAX_THREADS = 1024;
constexpr int BLOCK_ROW_MAX_N = BLOCK_ROW_MAX_THREADS * REG_FLOATS;  // 32768
constexpr int STREAM_THREADS = 1024;
constexpr int STREAM_FLOATS = 16;                     // floats per thread loaded per streaming step
constexpr int SPLIT_THREADS = 256;
constexpr int SPLIT_FLOATS = 16;                      // floats per thread per chunk
constexpr int CHUNK = SPLIT_THREADS * SPLIT_FLOATS;   // 4096 floats per chunk
constexpr int SPLIT_MAX_ROWS = 256;
constexpr int SPLIT_MAX_CHUNKS = (1000000 + CHUNK - 1) / CHUNK;  // 245 for N <= 1e6

// Scratch for the split path: one (m, d) per (row, chunk). Overwritten by every call before it is read.
__device__ float2 g_partials[SPLIT_MAX_ROWS * SPLIT_MAX_CHUNKS];

// ---------------------------------------------------------------------------------------------
// A "pack" is the unit one thread loads: float4 on the vectorised path, float otherwise.
template <bool VEC> struct Pack;
template <> struct Pack<true> { using T = float4; static constexpr int WIDTH = 4; };
template <> struct Pack<false> { using T = float; static constexpr int WIDTH = 1; };

__device__ __forceinline__ void set_neg_inf(float& q) { q = -INFINITY; }
__device__ __forceinline__ void set_neg_inf(float4& q) { q = make_float4(-INFINITY, -INFINITY, -INFINITY, -INFINITY); }
__device__ __forceinline__ float pack_max(float q) { return q; }
__device__ __forceinline__ float pack_max(float4 q) { return fmaxf(fmaxf(q.x, q.y), fmaxf(q.z, q.w)); }
__device__ __forceinline__ float pack_sum_exp(float q, float m) { return __expf(q - m); }
__device__ __forceinline__ float pack_sum_exp(float4 q, float m) {
    return (__expf(q.x - m) + __expf(q.y - m)) + (__expf(q.z - m) + __expf(q.w - m));
}
__device__ __forceinline__ float pack_softmax(float q, float m, float inv) { return __expf(q - m) * inv; }
__device__ __forceinline__ float4 pack_softmax(float4 q, float m, float inv) {
    return make_float4(__expf(q.x - m) * inv, __expf(q.y - m) * inv, __expf(q.z - m) * inv, __expf(q.w - m) * inv);
}
// c is a pack index; x points at the row (or chunk) start, 16-byte aligned when T is float4.
template <class T> __device__ __forceinline__ T load_pack(const float* __restrict__ x, int c) {
    return reinterpret_cast<const T*>(x)[c];
}
template <class T> __device__ __forceinline__ T load_pack_last_use(const float* __restrict__ x, int c) {
    return __ldcs(reinterpret_cast<const T*>(x) + c);  // evict-first: this is the final read
}
template <class T> __device__ __forceinline__ void store_pack(float* __restrict__ y, int c, T v) {
    __stcs(reinterpret_cast<T*>(y) + c, v);  // output is not re-read: do not let it push input out of L2
}

// ---------------------------------------------------------------------------------------------
// (m, d) statistics. EMPTY = (-inf, 0) is the identity of merge.
__device__ __forceinline__ float2 empty_stats() { return make_float2(-INFINITY, 0.f); }

__device__ __forceinline__ float2 merge(float2 a, float2 b) {
    const float m = fmaxf(a.x, b.x);
    if (m == -INFINITY) return a;  // both empty; avoids exp(-inf - -inf) = NaN
    return make_float2(m, a.y * __expf(a.x - m) + b.y * __expf(b.x - m));
}

// Merge across groups of GROUP consecutive lanes (GROUP a power of two <= 32); every lane gets its group's result.
template <int GROUP = WARP>
__device__ __forceinline__ float2 group_merge(float2 s) {
#pragma unroll
    for (int offset = GROUP / 2; offset > 0; offset /= 2) {
        const float2 o = make_float2(__shfl_xor_sync(FULL_MASK, s.x, offset), __shfl_xor_sync(FULL_MASK, s.y, offset));
        s = merge(s, o);
    }
    return s;
}

// Block-wide merge; every thread gets the result. `scratch` holds WARP + 1 float2. Call once per kernel.
__device__ __forceinline__ float2 block_merge(float2 s, float2* scratch) {
    const int warp = threadIdx.x / WARP, lane = threadIdx.x % WARP;
    const int warps = blockDim.x / WARP;
    s = group_merge(s);
    if (lane == 0) scratch[warp] = s;
    __syncthreads();
    if (warp == 0) {
        s = group_merge(lane < warps ? scratch[lane] : empty_stats());
        if (lane == 0) scratch[WARP] = s;
    }
    __syncthreads();
    return scratch[WARP];
}

// ---------------------------------------------------------------------------------------------
// A strip: the PACKS packs one thread keeps in registers, pack i at index i*stride + t of a row of
// n packs (stride = threads sharing the row). Slots past the end hold -inf and are never stored.
template <int PACKS, bool LAST_USE = false, class T>
__device__ __forceinline__ void load_strip(const float* __restrict__ x, int n, int t, int stride, T (&v)[PACKS]) {
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * stride + t;
        if (c < n) v[i] = LAST_USE ? load_pack_last_use<T>(x, c) : load_pack<T>(x, c);
        else set_neg_inf(v[i]);
    }
}

template <int PACKS, class T>
__device__ __forceinline__ float2 strip_stats(const T (&v)[PACKS]) {
    float m = -INFINITY;
#pragma unroll
    for (int i = 0; i < PACKS; ++i) m = fmaxf(m, pack_max(v[i]));
    const float ref = m == -INFINITY ? 0.f : m;  // a thread holding no element gets (-inf, 0)
    float d = 0.f;
#pragma unroll
    for (int i = 0; i < PACKS; ++i) d += pack_sum_exp(v[i], ref);  // -inf slots add exp(-inf) = 0
    return make_float2(m, d);
}

template <int PACKS, class T>
__device__ __forceinline__ void store_strip(float* __restrict__ y, int n, int t, int stride, const T (&v)[PACKS],
                                            float2 row) {
    const float inv = 1.f / row.y;
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * stride + t;
        if (c < n) store_pack<T>(y, c, pack_softmax(v[i], row.x, inv));
    }
}

// ---------------------------------------------------------------------------------------------
// Small rows: GROUP lanes per row (GROUP = 32 is warp-per-row), PACKS packs per lane, read once.
template <int GROUP, int PACKS, bool VEC>
__global__ void __launch_bounds__(WARP_KERNEL_THREADS) softmax_group_rows(const float* __restrict__ in,
                                                                          float* __restrict__ out, int M, int N) {
    using T = typename Pack<VEC>::T;
    constexpr int ROWS_PER_BLOCK = WARP_KERNEL_THREADS / GROUP;
    const int row = blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / GROUP;
    const int t = threadIdx.x % GROUP;
    // No early return: the shuffles below need every lane of the warp. Rows past M act as empty rows.
    const int n = row < M ? N / Pack<VEC>::WIDTH : 0;
    const size_t offset = (size_t)(row < M ? row : 0) * N;

    T v[PACKS];
    load_strip<PACKS>(in + offset, n, t, GROUP, v);
    const float2 stats = group_merge<GROUP>(strip_stats(v));
    store_strip(out + offset, n, t, GROUP, v, stats);
}

// Medium rows: one block of THREADS per row, the row in registers (THREADS * 32 >= N), read once.
template <int THREADS, bool VEC>
__global__ void __launch_bounds__(THREADS) softmax_block_rows(const float* __restrict__ in, float* __restrict__ out,
                                                              int N) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = REG_FLOATS / Pack<VEC>::WIDTH;
    __shared__ float2 scratch[WARP + 1];
    const size_t offset = (size_t)blockIdx.x * N;
    const int n = N / Pack<VEC>::WIDTH;

    T v[PACKS];
    load_strip<PACKS>(in + offset, n, threadIdx.x, THREADS, v);
    const float2 stats = block_merge(strip_stats(v), scratch);
    store_strip(out + offset, n, threadIdx.x, THREADS, v, stats);
}

// Long rows, many of them: one block per row streams the row twice.
template <bool VEC>
__global__ void __launch_bounds__(STREAM_THREADS) softmax_stream_rows(const float* __restrict__ in,
                                                                      float* __restrict__ out, int N) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = STREAM_FLOATS / Pack<VEC>::WIDTH;
    constexpr int STEP = PACKS * STREAM_THREADS;  // packs consumed by the block per iteration
    __shared__ float2 scratch[WARP + 1];
    const size_t offset = (size_t)blockIdx.x * N;
    const float* x = in + offset;
    float* y = out + offset;
    const int n = N / Pack<VEC>::WIDTH;

    // Pass 1: online (m, d). Each step loads PACKS packs, then rescales d once for the step's new max.
    float2 s = empty_stats();
    for (int base = threadIdx.x; base < n; base += STEP) {
        T v[PACKS];
        load_strip<PACKS>(x + (size_t)(base - threadIdx.x) * Pack<VEC>::WIDTH, n - (base - threadIdx.x),
                          threadIdx.x, STREAM_THREADS, v);
        s = merge(s, strip_stats(v));
    }
    const float2 stats = block_merge(s, scratch);

    // Pass 2: re-read (last use) and write.
    for (int base = threadIdx.x; base < n; base += STEP) {
        const size_t first = (size_t)(base - threadIdx.x) * Pack<VEC>::WIDTH;
        const int left = n - (base - threadIdx.x);
        T v[PACKS];
        load_strip<PACKS, true>(x + first, left, threadIdx.x, STREAM_THREADS, v);
        store_strip(y + first, left, threadIdx.x, STREAM_THREADS, v, stats);
    }
}

// Very long rows, few of them. grid = (chunks, M). Kernel 1: (m, d) of each chunk.
template <bool VEC>
__global__ void __launch_bounds__(SPLIT_THREADS) softmax_split_stats(const float* __restrict__ in, int N, int chunks) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = SPLIT_FLOATS / Pack<VEC>::WIDTH;
    __shared__ float2 scratch[WARP + 1];
    const int row = blockIdx.y, chunk = blockIdx.x;
    const int first = chunk * CHUNK;  // < N <= 1e6: fits in int
    const int n = min(CHUNK, N - first) / Pack<VEC>::WIDTH;

    T v[PACKS];
    load_strip<PACKS>(in + (size_t)row * N + first, n, threadIdx.x, SPLIT_THREADS, v);
    const float2 s = block_merge(strip_stats(v), scratch);
    if (threadIdx.x == 0) g_partials[row * chunks + chunk] = s;
}

// Kernel 2: merge the row's chunk partials, then normalise this block's chunk.
template <bool VEC>
__global__ void __launch_bounds__(SPLIT_THREADS) softmax_split_write(const float* __restrict__ in,
                                                                     float* __restrict__ out, int N, int chunks) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = SPLIT_FLOATS / Pack<VEC>::WIDTH;
    __shared__ float2 scratch[WARP + 1];
    const int row = blockIdx.y, chunk = blockIdx.x;
    const int first = chunk * CHUNK;
    const int n = min(CHUNK, N - first) / Pack<VEC>::WIDTH;
    const size_t offset = (size_t)row * N + first;

    T v[PACKS];
    load_strip<PACKS, true>(in + offset, n, threadIdx.x, SPLIT_THREADS, v);  // in flight during the merge
    float2 s = empty_stats();
    for (int j = threadIdx.x; j < chunks; j += SPLIT_THREADS) s = merge(s, g_partials[row * chunks + j]);
    const float2 stats = block_merge(s, scratch);
    store_strip(out + offset, n, threadIdx.x, SPLIT_THREADS, v, stats);
}

// ---------------------------------------------------------------------------------------------
template <int GROUP, int PACKS, bool VEC>
static void launch_group(const float* in, float* out, int M, int N) {
    constexpr int rows_per_block = WARP_KERNEL_THREADS / GROUP;
    const int blocks = (M + rows_per_block - 1) / rows_per_block;
    softmax_group_rows<GROUP, PACKS, VEC><<<blocks, WARP_KERNEL_THREADS>>>(in, out, M, N);
}

// N <= 1024. p = packs per row; tiny rows get a group of next_pow2(p) lanes with one pack each,
// larger ones a full warp with next_pow2(ceil(p / 32)) packs per lane.
template <bool VEC>
static void launch_small_rows(const float* in, float* out, int M, int N) {
    const int p = N / Pack<VEC>::WIDTH;
    if (p <= 1)             launch_group<1, 1, VEC>(in, out, M, N);
    else if (p <= 2)        launch_group<2, 1, VEC>(in, out, M, N);
    else if (p <= 4)        launch_group<4, 1, VEC>(in, out, M, N);
    else if (p <= 8)        launch_group<8, 1, VEC>(in, out, M, N);
    else if (p <= 16)       launch_group<16, 1, VEC>(in, out, M, N);
    else if (p <= WARP)     launch_group<WARP, 1, VEC>(in, out, M, N);
    else if (p <= WARP * 2) launch_group<WARP, 2, VEC>(in, out, M, N);
    else if (p <= WARP * 4) launch_group<WARP, 4, VEC>(in, out, M, N);
    else if (p <= WARP * 8) launch_group<WARP, 8, VEC>(in, out, M, N);
    else if constexpr (!VEC) {  // scalar rows of 257..1024
        if (p <= WARP * 16) launch_group<WARP, 16, VEC>(in, out, M, N);
        else                launch_group<WARP, 32, VEC>(in, out, M, N);
    }
}

// 1024 < N <= 32768: the smallest block that holds the row at 32 floats per thread.
template <bool VEC>
static void launch_block_rows(const float* in, float* out, int M, int N) {
    if (N <= 128 * REG_FLOATS)      softmax_block_rows<128, VEC><<<M, 128>>>(in, out, N);
    else if (N <= 256 * REG_FLOATS) softmax_block_rows<256, VEC><<<M, 256>>>(in, out, N);
    else if (N <= 512 * REG_FLOATS) softmax_block_rows<512, VEC><<<M, 512>>>(in, out, N);
    else                            softmax_block_rows<1024, VEC><<<M, 1024>>>(in, out, N);
}

template <bool VEC>
static void launch_long_rows(const float* in, float* out, int M, int N) {
    int device = 0, sms = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    const int chunks = (N + CHUNK - 1) / CHUNK;
    if (M < sms && M <= SPLIT_MAX_ROWS && chunks <= SPLIT_MAX_CHUNKS) {
        const dim3 grid(chunks, M);
        softmax_split_stats<VEC><<<grid, SPLIT_THREADS>>>(in, N, chunks);
        softmax_split_write<VEC><<<grid, SPLIT_THREADS>>>(in, out, N, chunks);
    } else {
        softmax_stream_rows<VEC><<<M, STREAM_THREADS>>>(in, out, N);
    }
}

template <bool VEC>
static void dispatch(const float* in, float* out, int M, int N) {
    if (N <= WARP_ROW_MAX_N)       launch_small_rows<VEC>(in, out, M, N);
    else if (N <= BLOCK_ROW_MAX_N) launch_block_rows<VEC>(in, out, M, N);
    else                           launch_long_rows<VEC>(in, out, M, N);
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* input, float* output, int M, int N) {
    if (N % 4 == 0 && aligned16(input) && aligned16(output)) dispatch<true>(input, output, M, N);
    else                                                     dispatch<false>(input, output, M, N);
}
