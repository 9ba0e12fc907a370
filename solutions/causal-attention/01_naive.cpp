// CPU rung 1 -- naive causal attention, single thread, one query row at a time.
//
// For each head and query row i: score keys 0..i only (dot product over D,
// scaled by 1/sqrt(D)) into a buffer, softmax that buffer (subtract its max,
// exponentiate, sum), then sum the value rows weighted by the normalised
// probabilities. The masked keys j > i are simply never visited. Every row
// re-reads its keys and values from memory. The correctness baseline.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* Q, const float* K, const float* V, float* output, int B, int H, int S, int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> scores(S);
    for (size_t head = 0; head < (size_t)B * H; ++head) {
        const float* q_head = Q + head * S * D;
        const float* k_head = K + head * S * D;
        const float* v_head = V + head * S * D;
        for (int i = 0; i < S; ++i) {
            const float* q = q_head + (size_t)i * D;
            for (int j = 0; j <= i; ++j) {
                float dot = 0.0f;
                for (int c = 0; c < D; ++c) dot += q[c] * k_head[(size_t)j * D + c];
                scores[j] = dot * scale;
            }

            float row_max = scores[0];
            for (int j = 1; j <= i; ++j) row_max = std::max(row_max, scores[j]);
            float sum = 0.0f;
            for (int j = 0; j <= i; ++j) {
                scores[j] = std::exp(scores[j] - row_max);
                sum += scores[j];
            }

            float* o = output + (head * S + i) * D;
            std::fill(o, o + D, 0.0f);
            for (int j = 0; j <= i; ++j) {
                const float p = scores[j] / sum;
                for (int c = 0; c < D; ++c) o[c] += p * v_head[(size_t)j * D + c];
            }
        }
    }
}
