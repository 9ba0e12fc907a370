// expect: wrong_answer
// message: input input was modified
// Cheat (5): uses its input as scratch: stores exp(x - max) there, then divides by the sum.
__global__ void in_place(float* x, float* y, int M, int N) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    float* xr = x + (size_t)r * N;
    float* yr = y + (size_t)r * N;
    float m = xr[0];
    for (int i = 1; i < N; ++i) m = fmaxf(m, xr[i]);
    float sum = 0.0f;
    for (int i = 0; i < N; ++i) sum += (xr[i] = expf(xr[i] - m));
    for (int i = 0; i < N; ++i) yr[i] = xr[i] / sum;
}
void solve(const float* input, float* output, int M, int N) {
    in_place<<<(M + 127) / 128, 128>>>(const_cast<float*>(input), output, M, N);
}
