// expect: wrong_answer
// message: elements wrong
// Cheat (3): the softmax of a wrong product: it samples every other k of the reduction and doubles the
// result, half the work for a product that is "about right" in distribution, then a correct row softmax.
#include <cmath>
#include <vector>
void solve(const float* A, const float* B, float* output, int M, int N, int K) {
    std::vector<double> row(N);
    for (int m = 0; m < M; ++m) {
        for (int n = 0; n < N; ++n) {
            double s = 0;
            for (int k = 0; k < K; k += 2) s += (double)A[(size_t)m * K + k] * B[(size_t)k * N + n];
            row[n] = K > 1 ? 2 * s : s;
        }
        double mx = row[0];
        for (int n = 1; n < N; ++n) mx = std::fmax(mx, row[n]);
        double total = 0;
        for (int n = 0; n < N; ++n) total += std::exp(row[n] - mx);
        for (int n = 0; n < N; ++n) output[(size_t)m * N + n] = (float)(std::exp(row[n] - mx) / total);
    }
}
