// Rung 1 -- naive rotary embeddings: one thread per pair, its angle computed afresh in double.
//
// Thread p of the Q kernel owns the pair (t, h, i) with p = (t * H + h) * D/2 + i: it computes
// theta_i = 10000^(-2i/D) and a = pos[t] * theta_i in double (at position 10^6 a float angle of 10^6
// radians is off by up to 0.03), their double cosine and sine, and rotates the elements i and i + D/2.
// Every head of a token recomputes the same D/2 double cosines and sines, and double transcendentals are
// slow; the loads of the two halves are coalesced, but one float at a time.
#include <cuda_runtime.h>

constexpr int THREADS = 256;

__global__ void rotate_naive(const float* __restrict__ x, float* __restrict__ out, const int* __restrict__ pos,
                             int heads, int D, long long pairs) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= pairs) return;
    const int half = D / 2;
    const int i = (int)(p % half);
    const long long head = p / half;  // t * heads + h
    const int t = (int)(head / heads);
    double s, c;
    sincos(pos[t] * pow(10000.0, -2.0 * i / D), &s, &c);
    const size_t at = (size_t)head * D + i;
    const float x1 = x[at], x2 = x[at + half];
    out[at] = x1 * (float)c - x2 * (float)s;
    out[at + half] = x2 * (float)c + x1 * (float)s;
}

static void rotate(const float* x, float* out, const int* pos, int T, int heads, int D) {
    const long long pairs = (long long)T * heads * (D / 2);
    rotate_naive<<<(unsigned)((pairs + THREADS - 1) / THREADS), THREADS>>>(x, out, pos, heads, D, pairs);
}

extern "C" void solve(const float* Q, const float* K, const int* pos, float* Q_out, float* K_out, int T, int H, int HK,
                      int D) {
    rotate(Q, Q_out, pos, T, H, D);
    rotate(K, K_out, pos, T, HK, D);
}
