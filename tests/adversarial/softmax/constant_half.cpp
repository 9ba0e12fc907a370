// expect: wrong_answer
// message: got 0.5
// Cheat (1): writes the constant 0.5 everywhere.
#include <cstddef>
void solve(const float* input, float* output, int M, int N) {
    for (size_t i = 0; i < (size_t)M * N; ++i) output[i] = 0.5f;
}
