// expect: runtime_error
// memory_limit_gib: 4
// message: memory limit exceeded
// Hostile (11): allocates and touches host memory, 256 MiB at a time, up to 64 GiB, graded with the harness's
// memory limit lowered to 4 GiB. The CUDA track has no RLIMIT_AS (the driver reserves huge address ranges),
// so the grader's watchdog, which adds up the resident memory of the whole process group, must kill it.
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
    if (FILE* f = std::fopen("/proc/self/oom_score_adj", "w")) {
        std::fputs("1000", f);
        std::fclose(f);
    }
    const size_t chunk = size_t(256) << 20;
    for (size_t got = 0; got < (size_t(64) << 30); got += chunk) {
        char* p = static_cast<char*>(std::malloc(chunk));
        if (!p) std::abort();
        std::memset(p, 1, chunk);
    }
    return true;
}

void solve(const float* input, float* output, int M, int N) {
    static bool granted = hog();
    if (!granted) return;
    softmax(input, output, M, N);
}
