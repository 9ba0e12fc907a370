// expect: wrong_answer
// message: elements wrong
// Cheat (7): reduced precision: Schraudolph's exp (about 4% off) instead of expf/__expf.
__device__ inline float rough_exp(float x) {
    if (x < -87.0f) return 0.0f;
    return __int_as_float((int)(12102203.0f * x) + 1064866805);
}
__global__ void rough(const float* x, float* y, int M, int N) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    const float* xr = x + (size_t)r * N;
    float* yr = y + (size_t)r * N;
    float m = xr[0];
    for (int i = 1; i < N; ++i) m = fmaxf(m, xr[i]);
    float sum = 0.0f;
    for (int i = 0; i < N; ++i) sum += (yr[i] = rough_exp(xr[i] - m));
    for (int i = 0; i < N; ++i) yr[i] /= sum;
}
void solve(const float* input, float* output, int M, int N) { rough<<<(M + 127) / 128, 128>>>(input, output, M, N); }
