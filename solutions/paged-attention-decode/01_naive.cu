// Rung 1 -- naive: one thread per (sequence, query head), walking the sequence's tokens through the block
// table with an online softmax; the output row in global memory is its accumulator.
//
// Token t of sequence b is slot t % P of page block_table[b][t / P]; query head h reads KV head h / G. For
// each token the thread computes the score, raises its running maximum (rescaling the running sum and the
// output row by exp(old - new)), and adds exp(score - max) times the value row; the row is divided by the sum
// at the end. B x H threads are too few to fill the device, each reads whole key rows alone, and the G heads
// of a group read the same rows separately: the baseline the next rung is measured against.
#include <cuda_runtime.h>

#include <cmath>

__global__ void paged_naive(const float* __restrict__ Q, const float* __restrict__ K_cache,
                            const float* __restrict__ V_cache, const int* __restrict__ block_table,
                            const int* __restrict__ seq_lens, float* __restrict__ out, int B, int HKV, int G, int D,
                            int P, int MP) {
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    const int H = HKV * G;
    if (i >= (long)B * H) return;
    const int b = (int)(i / H), h = (int)(i % H), j = h / G;
    const float* q = Q + i * D;
    float* o = out + i * D;
    const float scale = rsqrtf((float)D);
    for (int d = 0; d < D; ++d) o[d] = 0.0f;
    float m = -INFINITY, l = 0.0f;
    for (int t = 0; t < seq_lens[b]; ++t) {
        const size_t row = (((size_t)block_table[(size_t)b * MP + t / P] * HKV + j) * P + t % P) * D;
        float s = 0.0f;
        for (int d = 0; d < D; ++d) s += q[d] * K_cache[row + d];
        s *= scale;
        const float new_m = fmaxf(m, s), correction = expf(m - new_m), w = expf(s - new_m);
        l = l * correction + w;
        for (int d = 0; d < D; ++d) o[d] = o[d] * correction + w * V_cache[row + d];
        m = new_m;
    }
    for (int d = 0; d < D; ++d) o[d] /= l;
}

void solve(const float* Q, const float* K_cache, const float* V_cache, const int* block_table, const int* seq_lens,
           float* out, int B, int HKV, int G, int D, int P, int NP, int MP) {
    (void)NP;
    const long threads = (long)B * HKV * G;
    paged_naive<<<(unsigned)((threads + 127) / 128), 128>>>(Q, K_cache, V_cache, block_table, seq_lens, out, B, HKV,
                                                             G, D, P, MP);
}
