// expect: wrong_answer
// message: elements wrong
// Cheat (2): estimates each row's max and sum from every 8th element, scales the sum by 8.
__global__ void sampled(const float* x, float* y, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY;
        for (int i = 8 * threadIdx.x; i < N; i += 8 * blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int i = 8 * threadIdx.x; i < N; i += 8 * blockDim.x) sum += expf(xr[i] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0] * ((float)N / ((N + 7) / 8));
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) yr[i] = expf(fminf(xr[i], m) - m) / sum;
    }
}
void solve(const float* input, float* output, int M, int N) { sampled<<<M < 65536 ? M : 65536, 256>>>(input, output, M, N); }
