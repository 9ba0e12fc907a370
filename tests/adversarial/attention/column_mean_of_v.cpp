// expect: wrong_answer
// message: out of tolerance
// Cheat (3): ignores Q and K: every output row is the column mean of V, what attention gives when all the
// scores are equal (and, for inputs of mean zero, not far from the real answer on average). Right only for
// a single key (the 1x1x1 test); wrong from the first test with several keys.
#include <cstddef>
void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    for (int j = 0; j < d; ++j) {
        double s = 0;
        for (int n = 0; n < N; ++n) s += V[(size_t)n * d + j];
        const float mean = (float)(s / N);
        for (int m = 0; m < M; ++m) output[(size_t)m * d + j] = mean;
    }
}
