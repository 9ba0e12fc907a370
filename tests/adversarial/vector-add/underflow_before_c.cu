// expect: wrong_answer
// message: wrote 4 bytes before the start of C (first at element -1)
// Bug (bounds): a shifted index writes C[-1]. The canary before C catches the underflow.
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
    if (i == 0) C[i - 1] = 0.0f;
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    vector_add<<<(N + 255) / 256, 256>>>(A, B, C, N);
}
