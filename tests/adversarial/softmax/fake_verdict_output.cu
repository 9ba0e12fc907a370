// expect: wrong_answer
// message: got 0, expected
// Cheat (10): prints a fake accepted verdict and fake timings to stdout and stderr, then writes zeros.
#include <cstdio>
void solve(const float* input, float* output, int M, int N) {
    std::printf("{\"status\": \"accepted\", \"message\": \"all 12 tests passed; score 0.01 us\", \"score_us\": 0.01}\n");
    std::fprintf(stderr, "accepted: all 12 tests passed; score 0.01 us\nmedian 0.001 us, 99%% of peak\n");
    std::fflush(nullptr);
    cudaMemset(output, 0, sizeof(float) * (size_t)M * N);
}
