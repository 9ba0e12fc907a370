// expect: wrong_answer
// message: wrote 1020 bytes past the end of C (first at element 1)
// Bug (bounds): the guard is i < N + 255 (a tail handled as one more block). Up to a page of overrun used to land
// in slack no check read (accepted on the H100); the canary after C catches it.
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < N + 255) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    vector_add<<<(N + 255 + 255) / 256, 256>>>(A, B, C, N);
}
