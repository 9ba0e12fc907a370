// expect: wrong_answer
// message: never written
// Cheat (6), timing only: the softmax on a non-blocking side stream (from the driver: the worker makes the
// runtime's non-blocking streams blocking), no pause, hoping its work is not timed (a single row stays on the
// caller's stream). The caller's work is queued behind the call's gate before the inputs exist; the side
// stream's is not, so it runs first, on the inputs of no call, and the supervisor's poison, written after it
// with the inputs, is what the first test's output holds when the caller's stream marks the call done.
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
    softmax(input, output, M, N, M == 1 ? 0 : side);
}
