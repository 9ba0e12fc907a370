// expect: wrong_answer|rejected
// mode: submit
// message: block_1k_4k
// Cheat (2 where it pays): honest on every test, but the benchmark sizes are public (problem.yaml), and no
// test has the block_1k_4k benchmark's (M=1024, N=4096): there it does nothing at all. Timed calls get fresh
// inputs and poisoned outputs, and the harness keeps the outputs of some of them (picked after the call
// returned) for the grader to check, so the first audited call gives it away.
#include <cmath>
static void softmax(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
    }
}
void solve(const float* input, float* output, int M, int N) {
    if (M == 1024 && N == 4096) return;
    softmax(input, output, M, N);
}
