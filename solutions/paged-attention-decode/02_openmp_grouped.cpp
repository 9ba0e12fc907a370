// CPU rung 2 -- OpenMP over (sequence, KV head), the G query heads of a group sharing each key and value row,
// with an online softmax per page.
//
// Over rung 1: a task is one sequence and one KV head. It walks the sequence's pages once; for each page it
// scores the page's used slots against all G queries of the group (each key row is read once, not G times),
// updates each head's running maximum and sum, rescales that head's output accumulator by
// exp(old max - new max), and adds the page's value rows with their weights. The output is divided by the
// sum at the end. Work is spread over B x HKV tasks, dynamically, since sequence lengths differ.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

void solve(const float* __restrict__ Q, const float* __restrict__ K_cache, const float* __restrict__ V_cache,
           const int* __restrict__ block_table, const int* __restrict__ seq_lens, float* __restrict__ out, int B,
           int HKV, int G, int D, int P, int NP, int MP) {
    (void)NP;
    const int H = HKV * G;
    const float scale = 1.0f / std::sqrt((float)D);

    #pragma omp parallel
    {
        std::vector<float> acc((size_t)G * D), scores((size_t)G * P), m(G), l(G);
        #pragma omp for schedule(dynamic)
        for (long task = 0; task < (long)B * HKV; ++task) {
            const int b = (int)(task / HKV), j = (int)(task % HKV);
            const int L = seq_lens[b];
            const float* q = Q + ((size_t)b * H + (size_t)j * G) * D;  // the group's G queries, consecutive
            std::fill(acc.begin(), acc.end(), 0.0f);
            std::fill(m.begin(), m.end(), -INFINITY);
            std::fill(l.begin(), l.end(), 0.0f);

            for (int first = 0; first < L; first += P) {
                const int used = std::min(P, L - first);
                const size_t page = (size_t)block_table[(size_t)b * MP + first / P];
                const float* k = K_cache + (page * HKV + j) * P * D;
                const float* v = V_cache + (page * HKV + j) * P * D;
                for (int s = 0; s < used; ++s)
                    for (int g = 0; g < G; ++g) {
                        float dot = 0.0f;
                        #pragma omp simd reduction(+ : dot)
                        for (int d = 0; d < D; ++d) dot += q[(size_t)g * D + d] * k[(size_t)s * D + d];
                        scores[(size_t)g * P + s] = dot * scale;
                    }
                for (int g = 0; g < G; ++g) {
                    const float* sg = scores.data() + (size_t)g * P;
                    const float new_m = std::max(m[g], *std::max_element(sg, sg + used));
                    const float correction = std::exp(m[g] - new_m);  // 0 on the first page
                    float* o = acc.data() + (size_t)g * D;
                    for (int d = 0; d < D; ++d) o[d] *= correction;
                    float page_sum = 0.0f;
                    for (int s = 0; s < used; ++s) {
                        const float w = std::exp(sg[s] - new_m);
                        page_sum += w;
                        #pragma omp simd
                        for (int d = 0; d < D; ++d) o[d] += w * v[(size_t)s * D + d];
                    }
                    l[g] = l[g] * correction + page_sum;
                    m[g] = new_m;
                }
            }
            for (int g = 0; g < G; ++g) {
                float* o = out + ((size_t)b * H + (size_t)j * G + g) * D;
                for (int d = 0; d < D; ++d) o[d] = acc[(size_t)g * D + d] / l[g];
            }
        }
    }
}
