// expect: accepted
// Honest but unusual: the fast intrinsics. An online softmax (one pass for max and sum) whose running sum is
// rescaled with __fmaf_rn and __expf, and outputs __expf(x - max) times the sum's reciprocal (__frcp_rn).
__global__ void online(const float* x, float* y, int M, int N) {
    __shared__ float maxes[256], sums[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY, s = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) {
            const float v = xr[i];
            if (v > m) {
                s = __fmaf_rn(s, __expf(m - v), 1.0f);
                m = v;
            } else {
                s += __expf(v - m);
            }
        }
        maxes[threadIdx.x] = m;
        sums[threadIdx.x] = s;
        __syncthreads();
        for (int k = 128; k > 0; k >>= 1) {
            if (threadIdx.x < k) {
                const float m1 = maxes[threadIdx.x], m2 = maxes[threadIdx.x + k];
                const float mm = fmaxf(m1, m2);
                const float s1 = sums[threadIdx.x] == 0.0f ? 0.0f : sums[threadIdx.x] * __expf(m1 - mm);
                const float s2 = sums[threadIdx.x + k] == 0.0f ? 0.0f : sums[threadIdx.x + k] * __expf(m2 - mm);
                maxes[threadIdx.x] = mm;
                sums[threadIdx.x] = s1 + s2;
            }
            __syncthreads();
        }
        const float mm = maxes[0], inv = __frcp_rn(sums[0]);
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) yr[i] = __fmul_rn(__expf(xr[i] - mm), inv);
    }
}
void solve(const float* input, float* output, int M, int N) { online<<<M < 65536 ? M : 65536, 256>>>(input, output, M, N); }
