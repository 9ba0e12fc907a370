// CPU rung 1 -- naive rotary embeddings: every pair of every head of every token, its angle computed afresh.
//
// For token t, head h and pair i < D/2: theta_i = 10000^(-2i/D), a = pos[t] * theta_i, and the elements i and
// i + D/2 are rotated by a. The angle is computed in double: at position 10^6 an angle of 10^6 radians keeps
// 1e-10 of accuracy in double but only 0.03 in float. The cosine and sine are the same for every head of a
// token; recomputing them per head is what the next rungs stop doing.
#include <cmath>
#include <cstddef>

static void rotate_heads(const float* x, float* out, const int* pos, int T, int heads, int D) {
    const int half = D / 2;
    for (int t = 0; t < T; ++t)
        for (int h = 0; h < heads; ++h) {
            const size_t at = ((size_t)t * heads + h) * D;
            for (int i = 0; i < half; ++i) {
                const double a = pos[t] * std::pow(10000.0, -2.0 * i / D);
                const float c = (float)std::cos(a), s = (float)std::sin(a);
                const float x1 = x[at + i], x2 = x[at + i + half];
                out[at + i] = x1 * c - x2 * s;
                out[at + i + half] = x2 * c + x1 * s;
            }
        }
}

void solve(const float* Q, const float* K, const int* pos, float* Q_out, float* K_out, int T, int H, int HK, int D) {
    rotate_heads(Q, Q_out, pos, T, H, D);
    rotate_heads(K, K_out, pos, T, HK, D);
}
