// expect: wrong_answer
// message: first at [
// Cheat (2): computes the even rows (as a matrix of M/2 rows with twice the stride) and copies each into the
// odd row after it. Which odd row is the first wrong depends on the draw: two rows of huge negatives can have
// softmaxes within the tolerance.
__global__ void even_rows(const float* x, float* y, int M, int N) {
    __shared__ float red[256];
    for (int r = 2 * blockIdx.x; r < M; r += 2 * gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY;
        for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) sum += expf(xr[i] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = 128; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0];
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) {
            yr[i] = expf(xr[i] - m) / sum;
            if (r + 1 < M) yr[N + i] = yr[i];
        }
    }
}
void solve(const float* input, float* output, int M, int N) {
    int pairs = (M + 1) / 2;
    even_rows<<<pairs < 65536 ? pairs : 65536, 256>>>(input, output, M, N);
}
