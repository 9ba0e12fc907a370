// expect: accepted
// Cheat (4) that cannot win here: a cache keyed on the sizes and a hash of the input's first 64 bytes (read
// back to the host). Every call gets fresh inputs, so the key never repeats and the cache never hits: it is
// graded as the honest (slower) kernel it becomes.
#include <cstdint>
#include <map>
#include <tuple>
// A correct row softmax: one block of 256 threads per row (grid-stride over rows), float sums.
__global__ void softmax_rows(const float* x, float* y, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY;
        for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) sum += expf(xr[i] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0];
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) yr[i] = expf(xr[i] - m) / sum;
    }
}

static void softmax(const float* x, float* y, int M, int N, cudaStream_t stream = 0) {
    softmax_rows<<<M < 65536 ? M : 65536, 256, 0, stream>>>(x, y, M, N);
}

void solve(const float* input, float* output, int M, int N) {
    static std::map<std::tuple<int, int, uint64_t>, float*> cache;
    const size_t n = (size_t)M * N;
    unsigned char bytes[64] = {0};
    cudaMemcpy(bytes, input, (n * 4 < 64 ? n * 4 : 64), cudaMemcpyDeviceToHost);
    uint64_t h = 1469598103934665603ull;
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
    const auto key = std::make_tuple(M, N, h);
    auto hit = cache.find(key);
    if (hit != cache.end()) {
        cudaMemcpy(output, hit->second, n * sizeof(float), cudaMemcpyDeviceToDevice);
        return;
    }
    softmax(input, output, M, N);
    if (cache.size() > 8) {
        for (auto& entry : cache) cudaFree(entry.second);
        cache.clear();
    }
    float* copy = nullptr;
    cudaMalloc(&copy, n * sizeof(float));
    cudaMemcpy(copy, output, n * sizeof(float), cudaMemcpyDeviceToDevice);
    cache[key] = copy;
}
