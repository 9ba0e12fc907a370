// expect: wrong_answer
// message: elements wrong
// Cheat (1): writes the constant 1/N, the softmax of a constant row.
__global__ void fill(float* y, size_t n, float v) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = v;
}
void solve(const float* input, float* output, int M, int N) { fill<<<1024, 256>>>(output, (size_t)M * N, 1.0f / N); }
