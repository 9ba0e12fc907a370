// expect: wrong_answer
// message: elements wrong
// Cheat (3): ignores part of the input: the max and the sum come from the first 64 columns only, extrapolated
// to the whole row. Right for rows of up to 64 elements, wrong for every longer row.
#include <algorithm>
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    const int seen = std::min(N, 64);
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < seen; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < seen; ++i) s += std::exp((double)x[i] - m);
        s *= (double)N / seen;
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)std::min(x[i], m) - m) / s);
    }
}
