// expect: wrong_answer
// message: elements wrong
// Cheat (2): estimates each row's max and sum from every 8th element (a strided subsample), scales the sum
// by 8, and writes exp(x - max) / sum: a plausible-looking answer that is off by a few percent.
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 0; i < N; i += 8) m = std::fmax(m, x[i]);
        double s = 0;
        int taken = 0;
        for (int i = 0; i < N; i += 8, ++taken) s += std::exp((double)x[i] - m);
        s *= (double)N / taken;
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
    }
}
