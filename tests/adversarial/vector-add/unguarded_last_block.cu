// expect: wrong_answer
// message: wrote 4092 bytes past the end of C (first at element 1)
// Bug (bounds): the classic kernel without `if (i < N)`. The grid rounds up to whole blocks of 1024 threads, so
// the last block writes up to 1023 elements past the end of C. It used to be accepted for every N (the overrun
// fell in the page's slack); the 16 KiB canary after each buffer holds a whole block's overrun, and the first
// test (N = 1) writes 1023 elements into it.
__global__ void vector_add(const float* A, const float* B, float* C) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    C[i] = A[i] + B[i];
}

extern "C" void solve(const float* A, const float* B, float* C, int N) {
    vector_add<<<(N + 1023) / 1024, 1024>>>(A, B, C);
}
