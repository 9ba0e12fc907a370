// CPU rung 1 -- naive vector add, one thread.
//
// One loop, C[i] = A[i] + B[i]. With -O3 -march=native the compiler already vectorises it (AVX: 8 floats
// per instruction), so what is missing is only the other cores: one core cannot pull the machine's full
// memory bandwidth.

void solve(const float* A, const float* B, float* C, int N) {
    for (int i = 0; i < N; ++i) C[i] = A[i] + B[i];
}
