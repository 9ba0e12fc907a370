// expect: wrong_answer
// message: out of tolerance
// Cheat (3): ignores Q and K: every output row is the column mean of V (what equal scores would give).
__global__ void column_mean(const float* V, float* out, int M, int N, int d) {
    for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < d; j += gridDim.x * blockDim.x) {
        float s = 0.0f;
        for (int n = 0; n < N; ++n) s += V[(size_t)n * d + j];
        const float mean = s / N;
        for (int m = 0; m < M; ++m) out[(size_t)m * d + j] = mean;
    }
}
void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    column_mean<<<(d + 127) / 128, 128>>>(V, output, M, N, d);
}
