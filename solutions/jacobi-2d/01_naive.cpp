// CPU rung 1 -- naive Jacobi: S sweeps, each from one grid into the other.
//
// Every sweep reads the whole previous grid and writes a new one: the interior gets the average of its four
// neighbours, the boundary (first and last row and column) keeps the input's values. Two buffers alternate
// (output and a scratch grid), arranged so that the last sweep writes into output. Updating one grid in place
// would be Gauss-Seidel, a different iteration with a different answer.
#include <cstddef>
#include <cstring>
#include <utility>
#include <vector>

static void sweep(const float* u, float* v, int H, int W) {
    std::memcpy(v, u, sizeof(float) * W);                                  // first row
    std::memcpy(v + (size_t)(H - 1) * W, u + (size_t)(H - 1) * W, sizeof(float) * W);  // last row
    for (int i = 1; i < H - 1; ++i) {
        const float* up = u + (size_t)(i - 1) * W;
        const float* row = u + (size_t)i * W;
        const float* down = u + (size_t)(i + 1) * W;
        float* out = v + (size_t)i * W;
        out[0] = row[0];
        for (int j = 1; j < W - 1; ++j) out[j] = 0.25f * (up[j] + down[j] + row[j - 1] + row[j + 1]);
        out[W - 1] = row[W - 1];
    }
}

void solve(const float* input, float* output, int H, int W, int S) {
    const size_t n = (size_t)H * W;
    if (H < 3 || W < 3) {  // no interior
        std::memcpy(output, input, n * sizeof(float));
        return;
    }
    std::vector<float> scratch(n);
    // sweep k writes output when S - 1 - k is even, so the last one (k = S - 1) does
    float* dst = (S % 2 == 1) ? output : scratch.data();
    float* other = (S % 2 == 1) ? scratch.data() : output;
    sweep(input, dst, H, W);
    for (int k = 1; k < S; ++k) {
        std::swap(dst, other);
        sweep(other, dst, H, W);
    }
}
