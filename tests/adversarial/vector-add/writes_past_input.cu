// expect: wrong_answer
// message: wrote 4 bytes past the end of A (first at element 1)
// Bug (bounds): uses the element after the end of input A as scratch. The inputs' elements come back unchanged;
// the canary after A shows the write.
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
    if (i == 0) const_cast<float*>(A)[N] = 0.0f;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    vector_add<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
