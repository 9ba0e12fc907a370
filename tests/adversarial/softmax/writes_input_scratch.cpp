// expect: wrong_answer
// message: input input was modified
// Cheat (5): writes into its input, using it as scratch for exp(x - max). The output is right; the input
// that comes back is not, and inputs are read-only.
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    float* x_all = const_cast<float*>(input);
    for (int r = 0; r < M; ++r) {
        float* x = x_all + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) {
            x[i] = (float)std::exp((double)x[i] - m);
            s += x[i];
        }
        for (int i = 0; i < N; ++i) y[i] = (float)(x[i] / s);
    }
}
