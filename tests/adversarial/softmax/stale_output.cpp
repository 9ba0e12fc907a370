// expect: wrong_answer
// message: never written
// Cheat (8): relies on stale memory: computes once per output buffer, then does nothing on later calls and
// hopes the buffer still holds an answer. The harness poisons every output with NaN before every call.
#include <cmath>
#include <set>
void solve(const float* input, float* output, int M, int N) {
    static std::set<float*> written;
    if (!written.insert(output).second) return;
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
