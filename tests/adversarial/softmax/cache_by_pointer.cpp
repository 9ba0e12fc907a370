// expect: wrong_answer
// message: second input draw
// Cheat (4): a result cache keyed on the input pointer. The harness reuses a test's buffers for its second
// draw, so the cache hits there and returns the first draw's answer for new inputs.
#include <cmath>
#include <map>
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
    static std::map<const float*, std::vector<float>> cache;
    const size_t n = (size_t)M * N;
    auto hit = cache.find(input);
    if (hit != cache.end() && hit->second.size() == n) {
        std::copy(hit->second.begin(), hit->second.end(), output);
        return;
    }
    softmax(input, output, M, N);
    cache[input].assign(output, output + n);
}
