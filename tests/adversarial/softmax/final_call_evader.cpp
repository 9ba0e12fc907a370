// expect: wrong_answer
// mode: submit
// message: returned a wrong output
// Cheat (audits): computes honestly in the tests, in the warm-up and in the call it predicts to be the last of a
// benchmark, and returns garbage (1/N everywhere) in between. It steers the stop rules with its own times. On
// block_1k_4k (a size no test has) its first call is honest and lasts WARMUP_MS, past the quarter of the 3 s
// budget that ends the warm-up, so the warm-up is that one call on any machine; then every garbage call lasts
// GARBAGE_MS, and on a quiet machine five samples of one length end the sampling at once: call 6 is the last.
// When only the last timed call was audited, that made it accepted at several times its honest speed. Now the
// audited calls are a uniform draw of the samples, made as each call returns, and the sampling ends after a
// random tail: at most one sample is right and three are audited, so it is caught on every machine.
#include <chrono>
#include <cmath>

namespace {

constexpr double WARMUP_MS = 800, GARBAGE_MS = 40;

void softmax(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        float s = 0;
        for (int i = 0; i < N; ++i) s += y[i] = std::exp(x[i] - m);
        for (int i = 0; i < N; ++i) y[i] /= s;
    }
}

void last_until(std::chrono::steady_clock::time_point start, double ms) {
    while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < ms) {
    }
}

}  // namespace

void solve(const float* input, float* output, int M, int N) {
    const auto start = std::chrono::steady_clock::now();
    if (M != 1024 || N != 4096) {
        softmax(input, output, M, N);
        return;
    }
    static long calls = 0;
    const long call = calls++;  // 0: the warm-up; 1-5: the samples; 6: the last call
    if (call == 0 || call == 6) {
        softmax(input, output, M, N);
        last_until(start, call == 0 ? WARMUP_MS : GARBAGE_MS);
        return;
    }
    for (long i = 0; i < (long)M * N; ++i) output[i] = 1.0f / N;
    last_until(start, GARBAGE_MS);
}
