// expect: runtime_error
// message: SIGSEGV
// Crash (9): writes through a null pointer.
void solve(const float* input, float* output, int M, int N) {
    volatile float* wild = nullptr;
    wild[M] = input[0];
}
