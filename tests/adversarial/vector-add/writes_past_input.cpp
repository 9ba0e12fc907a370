// expect: wrong_answer
// message: wrote 4 bytes past the end of A (first at element 1)
// Bug (bounds): uses the element after the end of input A as scratch. The inputs' elements come back unchanged,
// so the input check alone would not see it; the canary after A does.
void solve(const float* A, const float* B, float* C, int N) {
    float* scratch = const_cast<float*>(A) + N;
    *scratch = 0.0f;
    for (int i = 0; i < N; ++i) C[i] = A[i] + B[i];
}
