// CPU rung 2 -- OpenMP over (sequence, channel), time in blocks whose B and C columns are transposed once.
//
// Over rung 1: threads take (sequence, channel) rows dynamically. Time runs in blocks of T_BLOCK steps; for
// each block a thread copies the B and C of its sequence into [step][state] order (so the state loop reads
// them contiguously and vectorises), then runs the recurrence with the dstate states in a small array: the
// decay exp(delta A) and the update are computed for all states of a step in one simd loop, and y's sum over
// states is a simd reduction. The recurrence itself stays sequential in time: the parallelism is the
// batch x dim independent rows, plenty on a CPU.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

constexpr int T_BLOCK = 256;

void solve(const float* __restrict__ u, const float* __restrict__ delta, const float* __restrict__ A,
           const float* __restrict__ B, const float* __restrict__ C, const float* __restrict__ D,
           float* __restrict__ y, int batch, int dim, int dstate, int seqlen) {
    #pragma omp parallel
    {
        std::vector<float> h(dstate), bt((size_t)T_BLOCK * dstate), ct((size_t)T_BLOCK * dstate);
        #pragma omp for schedule(dynamic)
        for (long r = 0; r < (long)batch * dim; ++r) {
            const int b = (int)(r / dim), c = (int)(r % dim);
            const size_t row = (size_t)r * seqlen;
            const float* Bb = B + (size_t)b * dstate * seqlen;
            const float* Cb = C + (size_t)b * dstate * seqlen;
            const float* a = A + (size_t)c * dstate;
            std::fill(h.begin(), h.end(), 0.0f);
            for (int t0 = 0; t0 < seqlen; t0 += T_BLOCK) {
                const int steps = std::min(T_BLOCK, seqlen - t0);
                for (int s = 0; s < dstate; ++s)
                    for (int i = 0; i < steps; ++i) {
                        bt[(size_t)i * dstate + s] = Bb[(size_t)s * seqlen + t0 + i];
                        ct[(size_t)i * dstate + s] = Cb[(size_t)s * seqlen + t0 + i];
                    }
                for (int i = 0; i < steps; ++i) {
                    const float dt = delta[row + t0 + i], x = u[row + t0 + i];
                    const float* bi = bt.data() + (size_t)i * dstate;
                    const float* ci = ct.data() + (size_t)i * dstate;
                    float out = 0.0f;
                    #pragma omp simd reduction(+ : out)
                    for (int s = 0; s < dstate; ++s) {
                        h[s] = std::exp(dt * a[s]) * h[s] + dt * bi[s] * x;
                        out += ci[s] * h[s];
                    }
                    y[row + t0 + i] = out + D[c] * x;
                }
            }
        }
    }
}
