// expect: wrong_answer
// message: second input draw
// Cheat (4): a result cache keyed on the sizes (M, N). Each test runs twice on independent inputs, so the
// second draw gets the first draw's answer.
#include <cmath>
#include <map>
#include <utility>
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
    static std::map<std::pair<int, int>, std::vector<float>> cache;
    auto hit = cache.find({M, N});
    if (hit != cache.end()) {
        std::copy(hit->second.begin(), hit->second.end(), output);
        return;
    }
    softmax(input, output, M, N);
    cache[{M, N}].assign(output, output + (size_t)M * N);
}
