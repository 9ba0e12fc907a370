// expect: wrong_answer
// message: got 0.5
// Cheat (1): writes the constant 0.5 everywhere.
__global__ void fill(float* y, size_t n, float v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = v;
}
void solve(const float* input, float* output, int M, int N) { fill<<<1024, 256>>>(output, (size_t)M * N, 0.5f); }
