// expect: accepted
// Honest but unusual: allocates scratch memory on every call (the row's exponentials, with new[]) and frees
// it before returning. Nothing about that may be mistaken for a cheat.
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    double* scratch = new double[(size_t)N];
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += (scratch[i] = std::exp((double)x[i] - m));
        for (int i = 0; i < N; ++i) y[i] = (float)(scratch[i] / s);
    }
    delete[] scratch;
}
