// expect: wrong_answer
// message: never written
// Hostile (11): allocates all device memory, 256 MiB at a time, and never frees it, so that the harness (and,
// on a shared GPU, anyone else) runs out. The output is computed only if it got more than the whole device
// (it cannot), so the first test is a wrong answer; the harness then fails to allocate the next test's
// buffers, and the reference graded after the suite shows the memory came back when the process died.
#include <vector>
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

static bool hog() {
    size_t free_bytes = 0, total = 0;
    cudaMemGetInfo(&free_bytes, &total);
    static std::vector<void*> held;
    size_t got = 0;
    for (;;) {
        void* p = nullptr;
        if (cudaMalloc(&p, size_t(256) << 20) != cudaSuccess) break;
        held.push_back(p);
        got += size_t(256) << 20;
    }
    cudaGetLastError();  // clear the out-of-memory error
    return got > total;
}

void solve(const float* input, float* output, int M, int N) {
    static bool granted = hog();
    if (!granted) return;
    softmax(input, output, M, N);
}
