// CPU rung 1 -- naive layer norm backward: one row at a time, the column sums in doubles.
//
// For each row: the mean and the two-pass variance, recomputed from X (the forward's statistics are not
// inputs); xhat = (x - mean) * rstd and g = gamma * dY; the row sums of g and g * xhat; then
// dX = rstd * (g - mean(g) - xhat * mean(g * xhat)). dgamma and dbeta add dY * xhat and dY down the columns,
// row after row, in doubles: a float running sum over 65,537 rows loses 1e-3.
#include <cmath>
#include <cstddef>
#include <vector>

constexpr float EPS = 1e-5f;

void solve(const float* input, const float* gamma, const float* dY, float* dX, float* dgamma, float* dbeta, int M,
           int N) {
    std::vector<double> sum_gamma(N, 0.0), sum_beta(N, 0.0);
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        const float* dy = dY + (size_t)r * N;
        double sum = 0.0;
        for (int j = 0; j < N; ++j) sum += x[j];
        const float mean = (float)(sum / N);
        double squares = 0.0;
        for (int j = 0; j < N; ++j) squares += (double)(x[j] - mean) * (x[j] - mean);
        const float rstd = 1.0f / std::sqrt((float)(squares / N) + EPS);
        double sum_g = 0.0, sum_gx = 0.0;
        for (int j = 0; j < N; ++j) {
            const float xhat = (x[j] - mean) * rstd, g = gamma[j] * dy[j];
            sum_g += g;
            sum_gx += (double)g * xhat;
            sum_gamma[j] += (double)dy[j] * xhat;
            sum_beta[j] += dy[j];
        }
        const float mean_g = (float)(sum_g / N), mean_gx = (float)(sum_gx / N);
        float* out = dX + (size_t)r * N;
        for (int j = 0; j < N; ++j) out[j] = rstd * (gamma[j] * dy[j] - mean_g - (x[j] - mean) * rstd * mean_gx);
    }
    for (int j = 0; j < N; ++j) {
        dgamma[j] = (float)sum_gamma[j];
        dbeta[j] = (float)sum_beta[j];
    }
}
