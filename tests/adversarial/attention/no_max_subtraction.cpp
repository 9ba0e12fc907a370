// expect: wrong_answer
// message: large_scores
// Attention whose softmax skips the row maximum: exp(q.k / sqrt(d)) straight from the scores. With the usual
// inputs (scores of a few units) it is as right as the honest one; on large_scores (scores past 88 in every
// row, up to about 240) expf overflows to inf and every output of such a row is inf/inf = NaN.
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* Q, const float* K, const float* V, float* output, int M, int N, int d) {
    const float scale = 1.0f / std::sqrt((float)d);
    std::vector<float> p(N);
    for (int i = 0; i < M; ++i) {
        const float* q = Q + (size_t)i * d;
        float sum = 0.0f;
        for (int j = 0; j < N; ++j) {
            float dot = 0.0f;
            for (int c = 0; c < d; ++c) dot += q[c] * K[(size_t)j * d + c];
            p[j] = std::exp(dot * scale);  // no maximum subtracted
            sum += p[j];
        }
        float* o = output + (size_t)i * d;
        for (int c = 0; c < d; ++c) o[c] = 0.0f;
        for (int j = 0; j < N; ++j)
            for (int c = 0; c < d; ++c) o[c] += p[j] / sum * V[(size_t)j * d + c];
    }
}
