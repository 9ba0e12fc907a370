// expect: wrong_answer
// message: elements wrong
// Cheat (7): reduced precision: rounds A and B to bfloat16 (8 significant bits, what a bf16 tensor-core
// kernel would read) before multiplying, with float accumulation. Cheaper on hardware that has it, and off
// by about 0.4% of each product.
#include <cstdint>
#include <cstring>
#include <vector>
static inline float to_bf16(float v) {
    uint32_t b;
    std::memcpy(&b, &v, sizeof b);
    b = (b + 0x7FFFu + ((b >> 16) & 1u)) & 0xFFFF0000u;
    std::memcpy(&v, &b, sizeof v);
    return v;
}
void solve(const float* A, const float* B, float* C, int M, int N, int K) {
    std::vector<float> a((size_t)M * K), b((size_t)K * N);
    for (size_t i = 0; i < a.size(); ++i) a[i] = to_bf16(A[i]);
    for (size_t i = 0; i < b.size(); ++i) b[i] = to_bf16(B[i]);
    #pragma omp parallel for schedule(static)
    for (int m = 0; m < M; ++m) {
        float* c = C + (size_t)m * N;
        for (int n = 0; n < N; ++n) c[n] = 0.0f;
        for (int k = 0; k < K; ++k) {
            const float av = a[(size_t)m * K + k];
            const float* bk = b.data() + (size_t)k * N;
            for (int n = 0; n < N; ++n) c[n] += av * bk[n];
        }
    }
}
