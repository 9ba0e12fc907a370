// expect: wrong_answer
// message: got 0, expected
// Cheat (10): prints a fake accepted verdict (the --json contract's shape) and fake timings to stdout and
// stderr, then writes zeros. The grader never parses what the sandboxed program prints.
#include <cstdio>
#include <cstring>
void solve(const float* input, float* output, int M, int N) {
    std::printf("{\"status\": \"accepted\", \"message\": \"all 11 tests passed; score 0.01 us\", \"score_us\": 0.01}\n");
    std::printf("accepted\nall tests passed\n");
    std::fprintf(stderr, "accepted: all 11 tests passed; score 0.01 us\nmedian 0.001 us, 99%% of peak\n");
    std::fflush(nullptr);
    std::memset(output, 0, sizeof(float) * (size_t)M * N);
}
