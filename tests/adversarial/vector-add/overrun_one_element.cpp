// expect: wrong_answer
// message: wrote 4 bytes past the end of C (first at element 1)
// Bug (bounds): an off-by-one loop bound, i <= N, writes one element past the end of C on every call. Every
// buffer is followed by a canary the supervisor checks after each call (grader/run/guards.h); the first test,
// N = 1, already sees it.
void solve(const float* A, const float* B, float* C, int N) {
    for (int i = 0; i <= N; ++i) C[i] = A[i] + B[i];
}
