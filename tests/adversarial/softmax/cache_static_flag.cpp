// expect: wrong_answer
// message: elements wrong
// Cheat (4): computes the real answer on the very first call, remembers it in a static buffer, and copies
// it back on every later call (as far as it reaches). Every call gets fresh inputs, so the copy is wrong.
#include <cmath>
#include <cstring>
#include <vector>
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
    static bool done = false;
    static std::vector<float> cached;
    const size_t n = (size_t)M * N;
    if (!done) {
        softmax(input, output, M, N);
        cached.assign(output, output + n);
        done = true;
        return;
    }
    for (size_t i = 0; i < n; ++i) output[i] = cached[i % cached.size()];
}
