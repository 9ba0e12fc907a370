// CPU rung 1 -- naive attention backward, single thread, P materialised.
//
// For each head: build the S x S probabilities P (scores, row max, exponentials,
// row sums), then O = P V and Delta_i = dO_i . O_i, dV = P^T dO, overwrite P with
// dS = P * (dO V^T - Delta) and finish dQ = dS K / sqrt(D), dK = dS^T Q / sqrt(D),
// each straight from its formula with plain loops. S x S floats per head (4 MB at
// S = 1024) and every formula a pass over them. The correctness baseline.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* Q, const float* K, const float* V, const float* dO, float* grads, int B, int H, int S,
           int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    const size_t head_size = (size_t)S * D, total = (size_t)B * H * head_size;
    std::vector<float> P((size_t)S * S), O(head_size), delta(S);
    for (size_t head = 0; head < (size_t)B * H; ++head) {
        const float* q = Q + head * head_size;
        const float* k = K + head * head_size;
        const float* v = V + head * head_size;
        const float* d_o = dO + head * head_size;
        float* dq = grads + head * head_size;
        float* dk = grads + total + head * head_size;
        float* dv = grads + 2 * total + head * head_size;

        for (int i = 0; i < S; ++i) {  // P, row by row
            float* p = P.data() + (size_t)i * S;
            for (int j = 0; j < S; ++j) {
                float dot = 0.0f;
                for (int c = 0; c < D; ++c) dot += q[(size_t)i * D + c] * k[(size_t)j * D + c];
                p[j] = dot * scale;
            }
            const float mx = *std::max_element(p, p + S);
            float sum = 0.0f;
            for (int j = 0; j < S; ++j) sum += (p[j] = std::exp(p[j] - mx));
            for (int j = 0; j < S; ++j) p[j] /= sum;
        }
        for (int i = 0; i < S; ++i) {  // O = P V, Delta
            float d = 0.0f;
            for (int c = 0; c < D; ++c) {
                float o = 0.0f;
                for (int j = 0; j < S; ++j) o += P[(size_t)i * S + j] * v[(size_t)j * D + c];
                O[(size_t)i * D + c] = o;
                d += d_o[(size_t)i * D + c] * o;
            }
            delta[i] = d;
        }
        for (int j = 0; j < S; ++j)  // dV = P^T dO
            for (int c = 0; c < D; ++c) {
                float acc = 0.0f;
                for (int i = 0; i < S; ++i) acc += P[(size_t)i * S + j] * d_o[(size_t)i * D + c];
                dv[(size_t)j * D + c] = acc;
            }
        for (int i = 0; i < S; ++i)  // dS = P * (dO V^T - Delta), in place of P
            for (int j = 0; j < S; ++j) {
                float dp = 0.0f;
                for (int c = 0; c < D; ++c) dp += d_o[(size_t)i * D + c] * v[(size_t)j * D + c];
                P[(size_t)i * S + j] *= dp - delta[i];
            }
        for (int i = 0; i < S; ++i)  // dQ = dS K / sqrt(D)
            for (int c = 0; c < D; ++c) {
                float acc = 0.0f;
                for (int j = 0; j < S; ++j) acc += P[(size_t)i * S + j] * k[(size_t)j * D + c];
                dq[(size_t)i * D + c] = acc * scale;
            }
        for (int j = 0; j < S; ++j)  // dK = dS^T Q / sqrt(D)
            for (int c = 0; c < D; ++c) {
                float acc = 0.0f;
                for (int i = 0; i < S; ++i) acc += P[(size_t)i * S + j] * q[(size_t)i * D + c];
                dk[(size_t)j * D + c] = acc * scale;
            }
    }
}
