// Rung 1 -- naive: one thread per (sequence, channel), walking time with its dstate states in a local array.
//
// The recurrence as written: every step decays each state by expf(delta A) and adds delta B u, and y sums
// C h plus the skip. The thread's steps are strictly sequential, so a sequence of 16,384 steps over 1536
// channels is 1536 threads doing 16,384 dependent steps each; neighbouring threads read u and delta seqlen
// floats apart (uncoalesced), and the state array lives in local memory: the baseline the scan rung is
// measured against.
#include <cuda_runtime.h>

constexpr int MAX_STATE = 64;

__global__ void scan_naive(const float* __restrict__ u, const float* __restrict__ delta, const float* __restrict__ A,
                           const float* __restrict__ B, const float* __restrict__ C, const float* __restrict__ D,
                           float* __restrict__ y, int batch, int dim, int dstate, int seqlen) {
    const long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= (long)batch * dim) return;
    const int b = (int)(r / dim), c = (int)(r % dim);
    const size_t row = (size_t)r * seqlen;
    const float* Bb = B + (size_t)b * dstate * seqlen;
    const float* Cb = C + (size_t)b * dstate * seqlen;
    float h[MAX_STATE];
    for (int s = 0; s < dstate; ++s) h[s] = 0.0f;
    for (int t = 0; t < seqlen; ++t) {
        const float dt = delta[row + t], x = u[row + t];
        float out = D[c] * x;
        for (int s = 0; s < dstate; ++s) {
            h[s] = expf(dt * A[c * dstate + s]) * h[s] + dt * Bb[(size_t)s * seqlen + t] * x;
            out += Cb[(size_t)s * seqlen + t] * h[s];
        }
        y[row + t] = out;
    }
}

void solve(const float* u, const float* delta, const float* A, const float* B, const float* C, const float* D,
           float* y, int batch, int dim, int dstate, int seqlen) {
    const long rows = (long)batch * dim;
    scan_naive<<<(unsigned)((rows + 127) / 128), 128>>>(u, delta, A, B, C, D, y, batch, dim, dstate, seqlen);
}
