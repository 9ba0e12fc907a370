// expect: accepted
// Honest but unusual: its result depends on summation order. Each row is split over many blocks that add
// their partial sums into the row's total with atomicAdd, in whatever order they finish (and the row max
// with atomicMax on order-preserving integers), so two runs need not agree bit for bit.
__device__ inline int ordered(float f) {
    const int i = __float_as_int(f);
    return i >= 0 ? i : i ^ 0x7FFFFFFF;
}
__device__ inline float unordered(int i) { return __int_as_float(i >= 0 ? i : i ^ 0x7FFFFFFF); }
constexpr int CHUNK = 2048;
__global__ void init(int* maxima, float* sums, int M) {
    for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < M; r += gridDim.x * blockDim.x) {
        maxima[r] = ordered(-INFINITY);
        sums[r] = 0.0f;
    }
}
__global__ void partial_max(const float* x, int* maxima, int M, int N) {
    for (long long b = blockIdx.x; b < (long long)M * ((N + CHUNK - 1) / CHUNK); b += gridDim.x) {
        const int chunks = (N + CHUNK - 1) / CHUNK, r = (int)(b / chunks), c0 = (int)(b % chunks) * CHUNK;
        float m = -INFINITY;
        for (int i = c0 + threadIdx.x; i < N && i < c0 + CHUNK; i += blockDim.x) m = fmaxf(m, x[(size_t)r * N + i]);
        for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFF, m, o));
        if ((threadIdx.x & 31) == 0) atomicMax(&maxima[r], ordered(m));
    }
}
__global__ void partial_sum(const float* x, const int* maxima, float* sums, int M, int N) {
    for (long long b = blockIdx.x; b < (long long)M * ((N + CHUNK - 1) / CHUNK); b += gridDim.x) {
        const int chunks = (N + CHUNK - 1) / CHUNK, r = (int)(b / chunks), c0 = (int)(b % chunks) * CHUNK;
        const float m = unordered(maxima[r]);
        float s = 0.0f;
        for (int i = c0 + threadIdx.x; i < N && i < c0 + CHUNK; i += blockDim.x) s += expf(x[(size_t)r * N + i] - m);
        for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xFFFFFFFF, s, o);
        if ((threadIdx.x & 31) == 0) atomicAdd(&sums[r], s);
    }
}
__global__ void normalise(const float* x, const int* maxima, const float* sums, float* y, int M, int N) {
    const size_t n = (size_t)M * N;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / N);
        y[i] = expf(x[i] - unordered(maxima[r])) / sums[r];
    }
}
void solve(const float* input, float* output, int M, int N) {
    static void* scratch = nullptr;
    static int capacity = 0;
    if (capacity < M) {
        cudaFree(scratch);
        cudaMalloc(&scratch, 2 * sizeof(float) * (size_t)M);
        capacity = M;
    }
    int* maxima = static_cast<int*>(scratch);
    float* sums = reinterpret_cast<float*>(maxima + M);
    init<<<256, 256>>>(maxima, sums, M);
    partial_max<<<8192, 256>>>(input, maxima, M, N);
    partial_sum<<<8192, 256>>>(input, maxima, sums, M, N);
    normalise<<<4096, 256>>>(input, maxima, sums, output, M, N);
}
