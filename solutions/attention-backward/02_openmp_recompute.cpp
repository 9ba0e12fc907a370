// CPU rung 2 -- flash-style backward on the CPU: OpenMP, no S x S matrix, P recomputed.
//
// Over rung 1: three parallel passes that keep only two numbers per query row.
// (1) Per query row: its scores, max m and sum l give the log-sum-exp
//     L_i = m + log l, and O_i gives Delta_i = dO_i . O_i.
// (2) Per block of KEYS keys (a thread owns the block's dK and dV rows): every
//     query passes by; for each pair P_ij = exp(s_ij - L_i) is rebuilt from Q_i,
//     K_j and L_i alone, dS_ij = P_ij (dO_i . V_j - Delta_i), and dV_j += P_ij dO_i,
//     dK_j += dS_ij Q_i / sqrt(D).
// (3) Per query row: dQ_i = sum_j dS_ij K_j / sqrt(D), rebuilding P and dS again.
// Dot products and row updates run along D with SIMD; the block's K and V rows
// stay in L1 while the queries stream past.

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

constexpr int KEYS = 16;  // keys per task in pass 2

static inline float dot(const float* __restrict__ a, const float* __restrict__ b, int D) {
    float s = 0.0f;
    #pragma omp simd reduction(+ : s)
    for (int c = 0; c < D; ++c) s += a[c] * b[c];
    return s;
}

void solve(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
           const float* __restrict__ dO, float* __restrict__ grads, int B, int H, int S, int D) {
    const float scale = 1.0f / std::sqrt((float)D);
    const long long heads = (long long)B * H;
    const size_t head_size = (size_t)S * D, total = (size_t)heads * head_size;
    std::vector<float> lse((size_t)heads * S), delta((size_t)heads * S);

    // ---- pass 1: L_i and Delta_i ----
    #pragma omp parallel
    {
        std::vector<float> s(S), o(D);
        #pragma omp for schedule(static)
        for (long long row = 0; row < heads * S; ++row) {
            const size_t head = (size_t)(row / S);
            const float* q = Q + (size_t)row * D;
            const float* k = K + head * head_size;
            const float* v = V + head * head_size;
            float mx = -INFINITY;
            for (int j = 0; j < S; ++j) mx = std::max(mx, s[j] = dot(q, k + (size_t)j * D, D) * scale);
            float l = 0.0f;
            std::fill(o.begin(), o.end(), 0.0f);
            for (int j = 0; j < S; ++j) {
                const float p = std::exp(s[j] - mx);
                l += p;
                const float* vj = v + (size_t)j * D;
                #pragma omp simd
                for (int c = 0; c < D; ++c) o[c] += p * vj[c];
            }
            lse[row] = mx + std::log(l);
            delta[row] = dot(dO + (size_t)row * D, o.data(), D) / l;
        }
    }

    // ---- pass 2: dK and dV, a block of keys per task ----
    const int key_blocks = (S + KEYS - 1) / KEYS;
    #pragma omp parallel for schedule(static)
    for (long long task = 0; task < heads * key_blocks; ++task) {
        const size_t head = (size_t)(task / key_blocks);
        const int j0 = (int)(task % key_blocks) * KEYS, keys = std::min(KEYS, S - j0);
        const float* q = Q + head * head_size;
        const float* k = K + head * head_size + (size_t)j0 * D;
        const float* v = V + head * head_size + (size_t)j0 * D;
        const float* d_o = dO + head * head_size;
        float* dk = grads + total + head * head_size + (size_t)j0 * D;
        float* dv = grads + 2 * total + head * head_size + (size_t)j0 * D;
        std::fill(dk, dk + (size_t)keys * D, 0.0f);
        std::fill(dv, dv + (size_t)keys * D, 0.0f);
        for (int i = 0; i < S; ++i) {
            const float* qi = q + (size_t)i * D;
            const float* doi = d_o + (size_t)i * D;
            const float li = lse[head * S + i], di = delta[head * S + i];
            for (int j = 0; j < keys; ++j) {
                const float p = std::exp(dot(qi, k + (size_t)j * D, D) * scale - li);
                const float ds = p * (dot(doi, v + (size_t)j * D, D) - di) * scale;
                float* dkj = dk + (size_t)j * D;
                float* dvj = dv + (size_t)j * D;
                #pragma omp simd
                for (int c = 0; c < D; ++c) {
                    dvj[c] += p * doi[c];
                    dkj[c] += ds * qi[c];
                }
            }
        }
    }

    // ---- pass 3: dQ, a query row per task ----
    #pragma omp parallel for schedule(static)
    for (long long row = 0; row < heads * S; ++row) {
        const size_t head = (size_t)(row / S);
        const float* qi = Q + (size_t)row * D;
        const float* doi = dO + (size_t)row * D;
        const float* k = K + head * head_size;
        const float* v = V + head * head_size;
        float* dq = grads + (size_t)row * D;
        std::fill(dq, dq + D, 0.0f);
        const float li = lse[row], di = delta[row];
        for (int j = 0; j < S; ++j) {
            const float* kj = k + (size_t)j * D;
            const float p = std::exp(dot(qi, kj, D) * scale - li);
            const float ds = p * (dot(doi, v + (size_t)j * D, D) - di) * scale;
            #pragma omp simd
            for (int c = 0; c < D; ++c) dq[c] += ds * kj[c];
        }
    }
}
