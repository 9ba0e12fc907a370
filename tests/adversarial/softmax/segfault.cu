// expect: runtime_error
// message: SIGSEGV
// Crash (9): writes through a null host pointer.
void solve(const float* input, float* output, int M, int N) {
    volatile float* wild = nullptr;
    wild[M] = 1.0f;
}
