// expect: wrong_answer
// message: elements wrong
// Cheat (3): ignores part of the input: max and sum from the first 64 columns only, extrapolated to the row.
__global__ void head_only(const float* x, float* y, int M, int N) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    const float* xr = x + (size_t)r * N;
    float* yr = y + (size_t)r * N;
    int seen = N < 64 ? N : 64;
    float m = xr[0];
    for (int i = 1; i < seen; ++i) m = fmaxf(m, xr[i]);
    float sum = 0.0f;
    for (int i = 0; i < seen; ++i) sum += expf(xr[i] - m);
    sum *= (float)N / seen;
    for (int i = 0; i < N; ++i) yr[i] = expf(fminf(xr[i], m) - m) / sum;
}
void solve(const float* input, float* output, int M, int N) { head_only<<<(M + 127) / 128, 128>>>(input, output, M, N); }
