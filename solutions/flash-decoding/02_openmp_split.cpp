// CPU rung 2 -- split-K on the CPU: OpenMP tasks over (head, chunk of keys), each an online softmax, merged
// per head with the log-sum-exp rule.
//
// Over rung 1: with one head and a long context, parallelising over heads leaves every core but one idle, so
// the keys of each head are cut into chunks of CHUNK. A task scores its chunk's keys, keeps the chunk's
// maximum m_s and sum l_s of exp(s - m_s), and accumulates o_s = sum exp(s - m_s) v (rescaled whenever the
// running maximum grows). The merge takes m = max m_s and out = sum e^(m_s - m) o_s / sum e^(m_s - m) l_s.
// One pass over K and V, every row read once.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

constexpr int CHUNK = 2048;

void solve(const float* __restrict__ q, const float* __restrict__ K, const float* __restrict__ V,
           float* __restrict__ out, int H, int N, int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    const int chunks = (N + CHUNK - 1) / CHUNK;
    std::vector<float> part_o((size_t)H * chunks * D), part_m((size_t)H * chunks), part_l((size_t)H * chunks);

    #pragma omp parallel for schedule(dynamic)
    for (long task = 0; task < (long)H * chunks; ++task) {
        const int h = (int)(task / chunks), c = (int)(task % chunks);
        const int j0 = c * CHUNK, j1 = std::min(N, j0 + CHUNK);
        const float* qh = q + (size_t)h * D;
        float* o = part_o.data() + (size_t)task * D;
        float m = -INFINITY, l = 0.0f;
        for (int j = j0; j < j1; ++j) {
            const float* k = K + ((size_t)h * N + j) * D;
            const float* v = V + ((size_t)h * N + j) * D;
            float dot = 0.0f;
            #pragma omp simd reduction(+ : dot)
            for (int d = 0; d < D; ++d) dot += qh[d] * k[d];
            const float s = dot * scale;
            if (s > m) {  // a new maximum: rescale what the chunk has summed so far
                const float correction = std::exp(m - s);
                l *= correction;
                for (int d = 0; d < D; ++d) o[d] *= correction;
                m = s;
            }
            const float w = std::exp(s - m);
            l += w;
            #pragma omp simd
            for (int d = 0; d < D; ++d) o[d] += w * v[d];
        }
        part_m[task] = m;
        part_l[task] = l;
    }

    #pragma omp parallel for schedule(static)
    for (int h = 0; h < H; ++h) {
        const size_t first = (size_t)h * chunks;
        float m = -INFINITY;
        for (int c = 0; c < chunks; ++c) m = std::max(m, part_m[first + c]);
        float total = 0.0f;
        float* o = out + (size_t)h * D;
        std::fill(o, o + D, 0.0f);
        for (int c = 0; c < chunks; ++c) {
            const float w = std::exp(part_m[first + c] - m);
            total += w * part_l[first + c];
            for (int d = 0; d < D; ++d) o[d] += w * part_o[(first + c) * D + d];
        }
        for (int d = 0; d < D; ++d) o[d] /= total;
    }
}
