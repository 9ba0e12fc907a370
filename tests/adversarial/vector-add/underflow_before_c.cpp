// expect: wrong_answer
// message: wrote 4 bytes before the start of C (first at element -1)
// Bug (bounds): an off-by-one start, writing C[-1] (a shifted index, i - 1 for i from 0). The canary before C
// catches the underflow.
void solve(const float* A, const float* B, float* C, int N) {
    for (int i = 0; i < N; ++i) C[i - 1] = 0.0f;
    for (int i = 0; i < N; ++i) C[i] = A[i] + B[i];
}
