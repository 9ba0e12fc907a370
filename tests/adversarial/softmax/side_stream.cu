// expect: wrong_answer
// message: never written
// Cheat (6): does the work on a non-blocking side stream (after a 20 ms pause, a stand-in for a long kernel)
// and returns at once, so events on the caller's stream see an empty call. The stream comes from the driver:
// the worker makes the runtime's non-blocking streams blocking (whose work is then waited for and timed). The
// judge's clock stops, and the supervisor copies the outputs, when the caller's stream writes the DONE word:
// the side stream's results come 20 ms later and are never seen, so the first test's output still holds the
// poison.
// A correct row softmax: one block of 256 threads per row (grid-stride over rows), float sums.
#include <cuda.h>
#include <cuda_runtime.h>
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

__global__ void pause_ns(unsigned long long ns) {
    unsigned long long start;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    for (;;) {
        unsigned long long now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > ns) break;
        __nanosleep(1000);
    }
}

// A stream that does not wait for the default stream, from the driver: the worker makes the runtime's
// non-blocking streams blocking (so their work waits for the call's gate and is timed), not the driver's.
static cudaStream_t driver_nonblocking_stream() {
    using Create = CUresult (*)(CUstream*, unsigned int);
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found;
    cudaGetDriverEntryPointByVersion("cuStreamCreate", &fn, 12000, cudaEnableDefault, &found);
    CUstream s = nullptr;
    reinterpret_cast<Create>(fn)(&s, CU_STREAM_NON_BLOCKING);
    return reinterpret_cast<cudaStream_t>(s);
}

void solve(const float* input, float* output, int M, int N) {
    static cudaStream_t side = [] {
        return driver_nonblocking_stream();
    }();
    pause_ns<<<1, 1, 0, side>>>(20000000ull);
    softmax(input, output, M, N, side);
}
