// expect: rejected
// mode: submit
// message: tampered
// honest_floor_us: block_1k_4k 50
// Closed on the CPU track: the supervisor writes the record into its own folder; out/ holds nothing read.
// Cheat (timing record): computes every call honestly, but when the second benchmark (one_row_1m) starts,
// the first benchmark's timing record already lies in out/block_1k_4k.times, and the submission runs in the
// same process and as the same user as the harness: it rewrites the record with 0.5 us per call. Today the
// grader accepts that, with a score from the fake times.
#include <cmath>
#include <cstdio>
#include <string>
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
static void rewrite_times(const char* path) {
    FILE* f = std::fopen(path, "r");
    if (!f) return;
    char header[256] = {0};
    if (!std::fgets(header, sizeof header, f)) header[0] = 0;
    std::fclose(f);
    f = std::fopen(path, "w");
    if (!f) return;
    std::fputs(header, f);
    for (int call = 0; call < 30; ++call) std::fprintf(f, "%d 0.000500 0.000000\n", 100 + call);
    std::fclose(f);
}
void solve(const float* input, float* output, int M, int N) {
    static bool rewritten = false;
    if (!rewritten && M == 1 && N == 1000000) {
        if (FILE* f = std::fopen("out/block_1k_4k.times", "r")) {
            std::fclose(f);
            rewrite_times("out/block_1k_4k.times");
            rewritten = true;
        }
    }
    softmax(input, output, M, N);
}
