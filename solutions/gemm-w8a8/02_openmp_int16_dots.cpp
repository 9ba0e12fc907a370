// CPU rung 2 -- quantize all rows in parallel, then cache-blocked int8 dot products that vectorise, OpenMP.
//
// Over rung 1: the quantization runs once per row on all cores into one int8 matrix; then both operands are
// K-contiguous (q is M x K, W is N x K), so every element of Y is a dot product of two contiguous int8 rows.
// Written as int16 products summed in int32, the compiler turns it into vpmaddwd-style SIMD (16 or 32 lanes),
// exact as the problem requires. Threads own (row block, column block) tiles, so a block of W's rows (64 rows
// of K bytes) stays in L2 while the block of q's rows walks it.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

constexpr int ROW_BLOCK = 16;
constexpr int COL_BLOCK = 64;

static inline int32_t dot(const int8_t* __restrict__ a, const int8_t* __restrict__ b, int K) {
    int32_t acc = 0;
    #pragma omp simd reduction(+ : acc)
    for (int k = 0; k < K; ++k) acc += (int16_t)a[k] * (int16_t)b[k];
    return acc;
}

void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    std::vector<int8_t> q((size_t)M * K);
    std::vector<float> s(M);
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < M; ++i) {
        const float* x = X + (size_t)i * K;
        float amax = 0.0f;
        for (int k = 0; k < K; ++k) amax = std::fmax(amax, std::fabs(x[k]));
        const float scale = amax / 127.0f;
        int8_t* row = q.data() + (size_t)i * K;
        for (int k = 0; k < K; ++k)
            row[k] = scale > 0.0f ? (int8_t)std::fmin(127.0f, std::fmax(-127.0f, std::nearbyint(x[k] / scale))) : 0;
        s[i] = scale;
    }
    const int row_blocks = (M + ROW_BLOCK - 1) / ROW_BLOCK, col_blocks = (N + COL_BLOCK - 1) / COL_BLOCK;
    #pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; ++rb)
        for (int cb = 0; cb < col_blocks; ++cb) {
            const int i1 = std::min(M, (rb + 1) * ROW_BLOCK), j1 = std::min(N, (cb + 1) * COL_BLOCK);
            for (int i = rb * ROW_BLOCK; i < i1; ++i)
                for (int j = cb * COL_BLOCK; j < j1; ++j)
                    Y[(size_t)i * N + j] = (s[i] * sw[j]) * (float)dot(q.data() + (size_t)i * K, W + (size_t)j * K, K);
        }
}
