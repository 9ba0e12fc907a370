// CPU rung 1 -- naive: the recurrence as written, one (sequence, channel) at a time, one step at a time.
//
// For each step t: every state s decays by exp(delta_t A[c][s]) and takes in delta_t B_t[s] u_t, and y_t sums
// C_t[s] h_t[s] plus the skip D[c] u_t. B and C are read with a stride of seqlen between states: the
// correctness baseline.
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* u, const float* delta, const float* A, const float* B, const float* C, const float* D,
           float* y, int batch, int dim, int dstate, int seqlen) {
    std::vector<float> h(dstate);
    for (int b = 0; b < batch; ++b)
        for (int c = 0; c < dim; ++c) {
            const size_t row = ((size_t)b * dim + c) * seqlen;
            const float* Bb = B + (size_t)b * dstate * seqlen;
            const float* Cb = C + (size_t)b * dstate * seqlen;
            for (int s = 0; s < dstate; ++s) h[s] = 0.0f;
            for (int t = 0; t < seqlen; ++t) {
                const float dt = delta[row + t], x = u[row + t];
                float out = D[c] * x;
                for (int s = 0; s < dstate; ++s) {
                    h[s] = std::exp(dt * A[(size_t)c * dstate + s]) * h[s] + dt * Bb[(size_t)s * seqlen + t] * x;
                    out += Cb[(size_t)s * seqlen + t] * h[s];
                }
                y[row + t] = out;
            }
        }
}
