// expect: wrong_answer
// message: got 0, expected
// Cheat (1): writes zeros without reading the input. Every softmax output is at least e^-2/N > atol.
#include <cstring>
void solve(const float* input, float* output, int M, int N) {
    std::memset(output, 0, sizeof(float) * (size_t)M * N);
}
