// expect: accepted
// Cheat (4) that cannot win here: a cache keyed on the sizes and a hash of the input's first 64 bytes, the
// kind that fools a benchmark loop which calls solve on the same buffer again and again. kerneljudge gives
// every call fresh inputs (both draws of a test and every timed call), so the key never repeats, the cache
// never hits, and the kernel does the full work every time: it is graded as the honest kernel it becomes.
// (A hit on a key this short would return a wrong answer; with fresh inputs a hit has odds of ~2^-64.)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <tuple>
#include <vector>
static void softmax(const float* input, float* output, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
    }
}
static uint64_t first_bytes_hash(const float* x, size_t n) {
    unsigned char bytes[64] = {0};
    std::memcpy(bytes, x, std::min<size_t>(64, n * sizeof(float)));
    uint64_t h = 1469598103934665603ull;
    for (unsigned char b : bytes) h = (h ^ b) * 1099511628211ull;
    return h;
}
void solve(const float* input, float* output, int M, int N) {
    static std::map<std::tuple<int, int, uint64_t>, std::vector<float>> cache;
    static long hits = 0;
    const size_t n = (size_t)M * N;
    const auto key = std::make_tuple(M, N, first_bytes_hash(input, n));
    auto hit = cache.find(key);
    if (hit != cache.end()) {
        ++hits;
        std::copy(hit->second.begin(), hit->second.end(), output);
        return;
    }
    softmax(input, output, M, N);
    if (cache.size() > 64) cache.clear();
    cache[key].assign(output, output + n);
}
