// expect: wrong_answer
// message: wrote 1020 bytes past the end of C (first at element 1)
// Bug (bounds): a loop that runs 255 elements past the end (a tail handled as one more whole chunk of 256). Each
// buffer used to start on a page of its own and only its elements were compared, so up to a page of overrun
// landed in slack nobody read (accepted). The canary after C catches it on the first test.
void solve(const float* A, const float* B, float* C, int N) {
    for (int i = 0; i < N + 255; ++i) C[i] = A[i] + B[i];
}
