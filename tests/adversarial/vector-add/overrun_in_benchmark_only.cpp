// expect: wrong_answer
// mode: submit
// message: benchmark vec_16m (N=16777216): timed call 0 wrote 4 bytes past the end of C (first at element 16777216)
// Bug (bounds) only where it is timed: on vec_16m, a size no test has, it writes one element past the end of C.
// The guards are checked after every timed call too; the first warm-up call of the benchmark is call 0.
void solve(const float* A, const float* B, float* C, int N) {
    const int end = N == 16777216 ? N + 1 : N;
    for (int i = 0; i < end; ++i) C[i] = A[i] + B[i];
}
