// expect: wrong_answer
// message: elements wrong
// Cheat (1): writes the constant 1/N, the softmax of a constant row: right for N = 1 and close on average
// for inputs in [-1, 1], but far outside the relative tolerance element by element.
#include <cstddef>
void solve(const float* input, float* output, int M, int N) {
    for (size_t i = 0; i < (size_t)M * N; ++i) output[i] = 1.0f / N;
}
