// expect: wrong_answer
// message: never written, first at [1, 0]
// Cheat (2): computes row 0 correctly and nothing else. Passes the 1x1 and one-row tests, fails the first
// test with more than one row.
#include <cmath>
void solve(const float* input, float* output, int M, int N) {
    float m = input[0];
    for (int i = 1; i < N; ++i) m = std::fmax(m, input[i]);
    double s = 0;
    for (int i = 0; i < N; ++i) s += std::exp((double)input[i] - m);
    for (int i = 0; i < N; ++i) output[i] = (float)(std::exp((double)input[i] - m) / s);
}
