// expect: accepted
// Honest but unusual: three kernels in a row on the caller's stream (row maxima, row sums, normalisation),
// with a scratch buffer kept from call to call.
__global__ void row_max(const float* x, float* maxima, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float m = -INFINITY;
        for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        if (threadIdx.x == 0) maxima[r] = red[0];
        __syncthreads();
    }
}
__global__ void row_sum(const float* x, const float* maxima, float* sums, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float sum = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) sum += expf(xr[i] - maxima[r]);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        if (threadIdx.x == 0) sums[r] = red[0];
        __syncthreads();
    }
}
__global__ void normalise(const float* x, const float* maxima, const float* sums, float* y, int M, int N) {
    const size_t n = (size_t)M * N;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int r = (int)(i / N);
        y[i] = expf(x[i] - maxima[r]) / sums[r];
    }
}
void solve(const float* input, float* output, int M, int N) {
    static float* scratch = nullptr;
    static int capacity = 0;
    if (capacity < M) {
        cudaFree(scratch);
        cudaMalloc(&scratch, 2 * sizeof(float) * (size_t)M);
        capacity = M;
    }
    const int blocks = M < 65536 ? M : 65536;
    row_max<<<blocks, 256>>>(input, scratch, M, N);
    row_sum<<<blocks, 256>>>(input, scratch, scratch + M, M, N);
    normalise<<<4096, 256>>>(input, scratch, scratch + M, output, M, N);
}
