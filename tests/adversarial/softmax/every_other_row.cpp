// expect: wrong_answer
// message: first at [
// Cheat (2): computes the even rows correctly and copies each into the odd row after it. Which odd row is the
// first wrong depends on the draw: two rows of huge negatives can have softmaxes within the tolerance.
#include <cmath>
#include <cstring>
static void row(const float* x, float* y, int N) {
    float m = x[0];
    for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
    double s = 0;
    for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
    for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
}
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; r += 2) {
        row(input + (size_t)r * N, output + (size_t)r * N, N);
        if (r + 1 < M) std::memcpy(output + (size_t)(r + 1) * N, output + (size_t)r * N, sizeof(float) * N);
    }
}
