// expect: wrong_answer
// message: elements wrong
// Cheat (7): reduced precision: Schraudolph's exp (build the float's bits from x * 2^23 / ln 2), cheap and
// about 4% off. A real softmax must be accurate to a few ulp.
#include <cmath>
#include <cstdint>
#include <cstring>
static inline float rough_exp(float x) {
    if (x < -87.0f) return 0.0f;
    int32_t bits = (int32_t)(12102203.0f * x) + 1064866805;
    float y;
    std::memcpy(&y, &bits, sizeof y);
    return y;
}
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        float s = 0;
        for (int i = 0; i < N; ++i) s += (y[i] = rough_exp(x[i] - m));
        for (int i = 0; i < N; ++i) y[i] /= s;
    }
}
