// Rung 2 -- the row read once into registers, coalesced float4 loads, shuffle reductions.
//
// Over rung 1: the threads sharing a row read consecutive addresses (float4 when N % 4 == 0 and the
// pointers are aligned), keep their part of Y and dY in registers from the load to the write, and reduce the
// dot product with __shfl_xor_sync (across warps once through shared memory). Y and dY cross DRAM once and
// dX once: 12 bytes per element, the floor. The work per row decides the shape:
//   N <= 32 * 4 * 8     a warp per row, 8 rows per 256-thread block, no __syncthreads at all
//   N <= 1024 * 4 * 4   a block of 128..1024 threads per row, 16 floats of each input per thread
//   longer, many rows   a 1024-thread block per row streams it twice: the dot product, then the write. The
//                       second read must come from L2, so the block reserves most of the SM's shared memory
//                       (unused) to be the only one there: 132 rows of up to 256 KB each stay in the 50 MB L2
//                       of an H100 between the two passes (more blocks per SM would push them out)
//   longer, few rows    the row split into chunks of 4096: kernel 1 writes each chunk's partial dot product
//                       into scratch memory, kernel 2 loads its chunk, adds the row's partials (in a fixed
//                       order, so the result does not depend on timing) and writes (Y and dY read twice)
#include <cuda_runtime.h>
#include <stdint.h>

constexpr unsigned FULL = 0xffffffffu;

template <bool VEC> struct Pack;
template <> struct Pack<true> { using T = float4; static constexpr int W = 4; };
template <> struct Pack<false> { using T = float; static constexpr int W = 1; };

__device__ __forceinline__ float dot(float a, float b) { return a * b; }
__device__ __forceinline__ float dot(float4 a, float4 b) { return (a.x * b.x + a.y * b.y) + (a.z * b.z + a.w * b.w); }
__device__ __forceinline__ float grad(float y, float g, float d) { return y * (g - d); }
__device__ __forceinline__ float4 grad(float4 y, float4 g, float d) {
    return make_float4(y.x * (g.x - d), y.y * (g.y - d), y.z * (g.z - d), y.w * (g.w - d));
}
__device__ __forceinline__ void zero(float& v) { v = 0.f; }
__device__ __forceinline__ void zero(float4& v) { v = make_float4(0.f, 0.f, 0.f, 0.f); }

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(FULL, v, offset);
    return v;
}

// Block-wide sum; every thread gets it. `scratch` holds 33 floats.
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
    return scratch[32];
}

// A strip: PACKS packs per thread, pack i at i * lanes + t of a row of n packs; slots past the end hold 0.
// LAST_USE: evict-first loads (the final read); otherwise plain loads, which stay in L2 for a second pass.
template <int PACKS, bool LAST_USE = true, class T>
__device__ __forceinline__ float load_strip(const T* __restrict__ y, const T* __restrict__ g, int n, int t, int lanes,
                                            T (&vy)[PACKS], T (&vg)[PACKS]) {
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * lanes + t;
        if (c < n) {
            vy[i] = LAST_USE ? __ldcs(y + c) : y[c];
            vg[i] = LAST_USE ? __ldcs(g + c) : g[c];
        } else {
            zero(vy[i]);
            zero(vg[i]);
        }
        s += dot(vy[i], vg[i]);
    }
    return s;
}

template <int PACKS, class T>
__device__ __forceinline__ void store_strip(T* __restrict__ out, int n, int t, int lanes, const T (&vy)[PACKS],
                                            const T (&vg)[PACKS], float d) {
#pragma unroll
    for (int i = 0; i < PACKS; ++i) {
        const int c = i * lanes + t;
        if (c < n) __stcs(out + c, grad(vy[i], vg[i], d));
    }
}

constexpr int WARP_ROWS = 8;

template <int PACKS, bool VEC>
__global__ void __launch_bounds__(32 * WARP_ROWS) warp_rows(const float* __restrict__ Y, const float* __restrict__ dY,
                                                            float* __restrict__ dX, int M, int N) {
    using T = typename Pack<VEC>::T;
    const int row = blockIdx.x * WARP_ROWS + threadIdx.x / 32;
    if (row >= M) return;  // uniform over the warp
    const size_t at = (size_t)row * N;
    const int n = N / Pack<VEC>::W, t = threadIdx.x % 32;
    T vy[PACKS], vg[PACKS];
    const float d = warp_sum(load_strip<PACKS>(reinterpret_cast<const T*>(Y + at), reinterpret_cast<const T*>(dY + at),
                                               n, t, 32, vy, vg));
    store_strip<PACKS>(reinterpret_cast<T*>(dX + at), n, t, 32, vy, vg, d);
}

template <int THREADS, int PACKS, bool VEC>
__global__ void __launch_bounds__(THREADS) block_rows(const float* __restrict__ Y, const float* __restrict__ dY,
                                                      float* __restrict__ dX, int N) {
    using T = typename Pack<VEC>::T;
    __shared__ float scratch[33];
    const size_t at = (size_t)blockIdx.x * N;
    const int n = N / Pack<VEC>::W;
    T vy[PACKS], vg[PACKS];
    const float d = block_sum(load_strip<PACKS>(reinterpret_cast<const T*>(Y + at), reinterpret_cast<const T*>(dY + at),
                                                n, threadIdx.x, THREADS, vy, vg),
                              scratch);
    store_strip<PACKS>(reinterpret_cast<T*>(dX + at), n, threadIdx.x, THREADS, vy, vg, d);
}

// Long rows, many of them: a block per row, two passes over it, the second from L2.
constexpr int STREAM_THREADS = 1024;
constexpr int STREAM_FLOATS = 16;  // of each input per thread per step
constexpr int STREAM_RESERVE = 160 * 1024;  // dynamic shared memory asked for (unused): one block per SM

template <bool VEC>
__global__ void __launch_bounds__(STREAM_THREADS) stream_rows(const float* __restrict__ Y, const float* __restrict__ dY,
                                                              float* __restrict__ dX, int N) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = STREAM_FLOATS / Pack<VEC>::W;
    constexpr int STEP = PACKS * STREAM_THREADS;  // packs per step of the block
    __shared__ float scratch[33];
    const size_t at = (size_t)blockIdx.x * N;
    const T* y = reinterpret_cast<const T*>(Y + at);
    const T* g = reinterpret_cast<const T*>(dY + at);
    T* out = reinterpret_cast<T*>(dX + at);
    const int n = N / Pack<VEC>::W;
    float s = 0.f;
    for (int base = 0; base < n; base += STEP) {
        T vy[PACKS], vg[PACKS];
        s += load_strip<PACKS, false>(y + base, g + base, n - base, threadIdx.x, STREAM_THREADS, vy, vg);
    }
    const float d = block_sum(s, scratch);
    for (int base = 0; base < n; base += STEP) {
        T vy[PACKS], vg[PACKS];
        load_strip<PACKS>(y + base, g + base, n - base, threadIdx.x, STREAM_THREADS, vy, vg);
        store_strip<PACKS>(out + base, n - base, threadIdx.x, STREAM_THREADS, vy, vg, d);
    }
}

// Long rows, few of them: blockIdx.x = row * chunks + chunk, chunks of CHUNK floats.
constexpr int SPLIT_THREADS = 256;
constexpr int SPLIT_FLOATS = 16;  // of each input per thread
constexpr int CHUNK = SPLIT_THREADS * SPLIT_FLOATS;

template <bool VEC>
__global__ void __launch_bounds__(SPLIT_THREADS) chunk_dots(const float* __restrict__ Y, const float* __restrict__ dY,
                                                            float* __restrict__ partials, int N, int chunks) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = SPLIT_FLOATS / Pack<VEC>::W;
    __shared__ float scratch[33];
    const int row = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
    const size_t at = (size_t)row * N + (size_t)chunk * CHUNK;
    const int n = min(CHUNK, N - chunk * CHUNK) / Pack<VEC>::W;
    T vy[PACKS], vg[PACKS];
    const float s = block_sum(load_strip<PACKS>(reinterpret_cast<const T*>(Y + at), reinterpret_cast<const T*>(dY + at),
                                                n, threadIdx.x, SPLIT_THREADS, vy, vg),
                              scratch);
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}

template <bool VEC>
__global__ void __launch_bounds__(SPLIT_THREADS) chunk_write(const float* __restrict__ Y, const float* __restrict__ dY,
                                                             const float* __restrict__ partials, float* __restrict__ dX,
                                                             int N, int chunks) {
    using T = typename Pack<VEC>::T;
    constexpr int PACKS = SPLIT_FLOATS / Pack<VEC>::W;
    __shared__ float scratch[33];
    const int row = blockIdx.x / chunks, chunk = blockIdx.x % chunks;
    const size_t at = (size_t)row * N + (size_t)chunk * CHUNK;
    const int n = min(CHUNK, N - chunk * CHUNK) / Pack<VEC>::W;
    T vy[PACKS], vg[PACKS];
    load_strip<PACKS>(reinterpret_cast<const T*>(Y + at), reinterpret_cast<const T*>(dY + at), n, threadIdx.x,
                      SPLIT_THREADS, vy, vg);  // in flight while the partials are added
    float s = 0.f;
    for (int j = threadIdx.x; j < chunks; j += SPLIT_THREADS) s += partials[(size_t)row * chunks + j];
    const float d = block_sum(s, scratch);
    store_strip<PACKS>(reinterpret_cast<T*>(dX + at), n, threadIdx.x, SPLIT_THREADS, vy, vg, d);
}

// Scratch for the partial dot products, grown when a larger call comes (kept between calls).
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

static int multiprocessors() {
    static int count = 0;
    if (count == 0) {
        int device = 0;
        cudaGetDevice(&device);
        cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device);
    }
    return count;
}

template <int PACKS, bool VEC>
static void launch_warp_rows(const float* Y, const float* dY, float* dX, int M, int N) {
    warp_rows<PACKS, VEC><<<(M + WARP_ROWS - 1) / WARP_ROWS, 32 * WARP_ROWS>>>(Y, dY, dX, M, N);
}

template <bool VEC>
static void dispatch(const float* Y, const float* dY, float* dX, int M, int N) {
    const int packs = N / Pack<VEC>::W;
    constexpr int P = 16 / Pack<VEC>::W;  // packs per thread on the block path: 16 floats of each input
    if (packs <= 32)                launch_warp_rows<1, VEC>(Y, dY, dX, M, N);
    else if (packs <= 32 * 2)       launch_warp_rows<2, VEC>(Y, dY, dX, M, N);
    else if (packs <= 32 * 4)       launch_warp_rows<4, VEC>(Y, dY, dX, M, N);
    else if (packs <= 32 * 8)       launch_warp_rows<8, VEC>(Y, dY, dX, M, N);
    else if (packs <= 128 * P)      block_rows<128, P, VEC><<<M, 128>>>(Y, dY, dX, N);
    else if (packs <= 256 * P)      block_rows<256, P, VEC><<<M, 256>>>(Y, dY, dX, N);
    else if (packs <= 512 * P)      block_rows<512, P, VEC><<<M, 512>>>(Y, dY, dX, N);
    else if (packs <= 1024 * P)     block_rows<1024, P, VEC><<<M, 1024>>>(Y, dY, dX, N);
    else if (M >= multiprocessors()) {
        static bool reserved = false;  // the attribute is set once per kernel
        if (!reserved) {
            cudaFuncSetAttribute(stream_rows<VEC>, cudaFuncAttributeMaxDynamicSharedMemorySize, STREAM_RESERVE);
            reserved = true;
        }
        stream_rows<VEC><<<M, STREAM_THREADS, STREAM_RESERVE>>>(Y, dY, dX, N);
    } else {
        const int chunks = (N + CHUNK - 1) / CHUNK;
        const int blocks = M * chunks;  // M * N <= 2^28: at most 2^16 + M blocks
        float* partials = partials_for((size_t)blocks);
        chunk_dots<VEC><<<blocks, SPLIT_THREADS>>>(Y, dY, partials, N, chunks);
        chunk_write<VEC><<<blocks, SPLIT_THREADS>>>(Y, dY, partials, dX, N, chunks);
    }
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* Y, const float* dY, float* dX, int M, int N) {
    if (N % 4 == 0 && aligned16(Y) && aligned16(dY) && aligned16(dX)) dispatch<true>(Y, dY, dX, M, N);
    else                                                              dispatch<false>(Y, dY, dX, M, N);
}
