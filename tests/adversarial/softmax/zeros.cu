// expect: wrong_answer
// message: got 0, expected
// Cheat (1): writes zeros without reading the input.
void solve(const float* input, float* output, int M, int N) {
    cudaMemset(output, 0, sizeof(float) * (size_t)M * N);
}
