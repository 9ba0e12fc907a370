// expect: wrong_answer
// message: wrote 4 bytes past the end of C (first at element 1)
// Bug (bounds): the guard is i <= N, and the grid has room for it: one element past the end of C. The canary
// after C (grader/run/guards.h), checked by the supervisor after every call, catches it on the first test.
__global__ void vector_add(const float* A, const float* B, float* C, int N) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i <= N) C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    vector_add<<<(N + 1 + 255) / 256, 256>>>(A, B, C, N);
}
