// CPU rung 2 -- group the tokens by expert (a counting sort), then OpenMP over (expert, tile of units).
//
// Over rung 1: the tokens are sorted by expert once (count, prefix sum, scatter: O(T)), so each expert's
// tokens form one group. A task is one expert and a tile of TILE_N of its units: it widens those TILE_N
// weight rows to float32 once (64 x K floats, 256 KiB at K = 1024, which stay in L2) and multiplies every
// token of the group by them with vectorised dot products. X is widened once up front. Empty experts make
// no work; a skewed routing (every token to one expert) still spreads over the N / TILE_N tiles.
#include <omp.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

constexpr int TILE_N = 64;

static inline float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
    if (exp == 0x1F) bits = sign | 0x7F800000u | (mant << 13);
    else if (exp) bits = sign | ((exp + 112) << 23) | (mant << 13);
    else if (!mant) bits = sign;
    else {  // subnormal: normalise
        exp = 113;
        while (!(mant & 0x400)) mant <<= 1, --exp;
        bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
    }
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
}

void solve(const uint16_t* X, const uint16_t* W, const int* expert, float* Y, int T, int E, int N, int K) {
    std::vector<int> offset(E + 1, 0), order(T);
    for (int t = 0; t < T; ++t) ++offset[expert[t] + 1];
    for (int e = 0; e < E; ++e) offset[e + 1] += offset[e];
    {
        std::vector<int> cursor(offset.begin(), offset.end() - 1);
        for (int t = 0; t < T; ++t) order[cursor[expert[t]]++] = t;
    }

    std::vector<float> x((size_t)T * K);
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < (size_t)T * K; ++i) x[i] = half_to_float(X[i]);

    const int tiles_n = (N + TILE_N - 1) / TILE_N;
    #pragma omp parallel
    {
        std::vector<float> w((size_t)TILE_N * K);
        #pragma omp for collapse(2) schedule(dynamic)
        for (int e = 0; e < E; ++e)
            for (int tn = 0; tn < tiles_n; ++tn) {
                if (offset[e] == offset[e + 1]) continue;  // an empty expert
                const int n0 = tn * TILE_N, units = std::min(TILE_N, N - n0);
                const uint16_t* src = W + ((size_t)e * N + n0) * K;
                for (size_t i = 0; i < (size_t)units * K; ++i) w[i] = half_to_float(src[i]);
                for (int r = offset[e]; r < offset[e + 1]; ++r) {
                    const int t = order[r];
                    const float* xt = x.data() + (size_t)t * K;
                    for (int n = 0; n < units; ++n) {
                        const float* wn = w.data() + (size_t)n * K;
                        float sum = 0.0f;
                        #pragma omp simd reduction(+ : sum)
                        for (int k = 0; k < K; ++k) sum += xt[k] * wn[k];
                        Y[(size_t)t * N + n0 + n] = sum;
                    }
                }
            }
    }
}
