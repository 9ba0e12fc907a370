// CPU rung 1 -- naive: for each sequence and query head, score every token through the block table, softmax
// the scores, then sum the value rows they weight.
//
// Token t of sequence b lives in slot t % P of page block_table[b][t / P]; query head h reads KV head h / G.
// One buffer of L_b scores at a time, the maximum subtracted before exp. Each query head re-reads its KV
// head's keys and values, G times per group: the correctness baseline.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* Q, const float* K_cache, const float* V_cache, const int* block_table, const int* seq_lens,
           float* out, int B, int HKV, int G, int D, int P, int NP, int MP) {
    (void)NP;
    const int H = HKV * G;
    const float scale = 1.0f / std::sqrt((float)D);
    std::vector<float> scores((size_t)MP * P);
    for (int b = 0; b < B; ++b) {
        const int L = seq_lens[b];
        for (int h = 0; h < H; ++h) {
            const int j = h / G;
            const float* q = Q + ((size_t)b * H + h) * D;
            auto row = [&](const float* cache, int t) {
                const int page = block_table[(size_t)b * MP + t / P];
                return cache + (((size_t)page * HKV + j) * P + t % P) * D;
            };
            for (int t = 0; t < L; ++t) {
                const float* k = row(K_cache, t);
                float dot = 0.0f;
                for (int d = 0; d < D; ++d) dot += q[d] * k[d];
                scores[t] = dot * scale;
            }
            const float m = *std::max_element(scores.begin(), scores.begin() + L);
            float sum = 0.0f;
            for (int t = 0; t < L; ++t) sum += scores[t] = std::exp(scores[t] - m);
            float* o = out + ((size_t)b * H + h) * D;
            std::fill(o, o + D, 0.0f);
            for (int t = 0; t < L; ++t) {
                const float* v = row(V_cache, t);
                const float w = scores[t] / sum;
                for (int d = 0; d < D; ++d) o[d] += w * v[d];
            }
        }
    }
}
