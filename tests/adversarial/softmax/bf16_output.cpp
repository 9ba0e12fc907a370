// expect: wrong_answer
// message: elements wrong
// Cheat (7): reduced precision: a correct softmax whose outputs are rounded to bfloat16 (8 significant
// bits, relative error up to 0.4%), as a kernel that stores half-width results would produce.
#include <cmath>
#include <cstdint>
#include <cstring>
static inline float to_bf16(float v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
void solve(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
        for (int i = 0; i < N; ++i) y[i] = to_bf16((float)(std::exp((double)x[i] - m) / s));
    }
}
