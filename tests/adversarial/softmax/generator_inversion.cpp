// expect: wrong_answer
// message: out of tolerance
// time_limit: 240
// Cheat (generator inversion): the input generator is public (grader/run/inputs.py): element i is
// low + scale * (fmix32(fmix32(i ^ s_lo) + s_hi) >> 8) / 2^24 for a 64-bit tensor seed (s_lo, s_hi). From the
// 15 inputs of tiny_odd's first draw it finds that seed (every 32-bit s_lo, with s_hi from the differences of
// two elements: about 2^32 cheap steps, seconds on two cores), runs the seed derivation backwards
// (splitmix64 is a bijection) to the case seed, derives the second draw's seed as the in-process harness did
// (splitmix64(case_seed ^ call * golden)), and answers the second draw from those predicted inputs without
// reading `input`. That works while per-call seeds come from a counter; with the supervisor's keyed PRF
// (SipHash-2-4 of the call index under a secret 128-bit key) the recovered seed says nothing about the next
// call, and the prediction is wrong. Every other test is computed honestly. "out of tolerance" (not "never
// written") shows the search did find a seed: a failed search leaves the second draw unwritten.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

namespace {

constexpr uint64_t GOLDEN = 0x9E3779B97F4A7C15ull;

uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

uint32_t inverse32(uint32_t c) {  // c odd: c * inverse = 1 mod 2^32 (Newton)
    uint32_t x = c;
    for (int i = 0; i < 5; ++i) x *= 2 - c * x;
    return x;
}

uint64_t inverse64(uint64_t c) {
    uint64_t x = c;
    for (int i = 0; i < 6; ++i) x *= 2 - c * x;
    return x;
}

uint32_t unfmix32(uint32_t h) {
    h ^= h >> 16;
    h *= inverse32(0xC2B2AE35u);
    h ^= (h >> 13) ^ (h >> 26);
    h *= inverse32(0x85EBCA6Bu);
    h ^= h >> 16;
    return h;
}

uint64_t splitmix64(uint64_t x) {
    x += GOLDEN;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint64_t unxorshift(uint64_t y, int s) {
    uint64_t x = y;
    for (int i = 0; i < 64 / s + 1; ++i) x = y ^ (x >> s);
    return x;
}

uint64_t unsplitmix64(uint64_t z) {
    z = unxorshift(z, 31);
    z *= inverse64(0x94D049BB133111EBull);
    z = unxorshift(z, 27);
    z *= inverse64(0xBF58476D1CE4E5B9ull);
    z = unxorshift(z, 30);
    return z - GOLDEN;
}

// The tensor seed behind `top` (the 24 hash bits of each of the first elements), 0 if none fits.
uint64_t recover_seed(const std::vector<uint32_t>& top) {
    std::vector<uint32_t> c0(256), c1(256);
    for (uint32_t k = 0; k < 256; ++k) c0[k] = unfmix32(top[0] << 8 | k), c1[k] = unfmix32(top[1] << 8 | k);
    std::vector<std::pair<uint32_t, uint32_t>> diffs;  // (c0 - c1, c0)
    for (uint32_t a : c0)
        for (uint32_t b : c1) diffs.push_back({a - b, a});
    std::sort(diffs.begin(), diffs.end());
    std::vector<uint64_t> bitmap((1u << 24) / 64);
    for (auto& d : diffs) bitmap[(d.first >> 8) / 64] |= 1ull << ((d.first >> 8) % 64);
    std::atomic<uint64_t> found{0};
    auto hit = [&](uint32_t d) { return bitmap[(d >> 8) / 64] >> ((d >> 8) % 64) & 1; };
    auto try_pair = [&](uint32_t lo, uint32_t a0, uint32_t d) {
        auto it = std::lower_bound(diffs.begin(), diffs.end(), std::make_pair(d, 0u));
        for (; it != diffs.end() && it->first == d; ++it) {
            const uint32_t hi = it->second - a0;
            bool all = true;
            for (uint32_t i = 2; i < top.size() && all; ++i) all = (fmix32(fmix32(i ^ lo) + hi) >> 8) == top[i];
            if (all) found.store((uint64_t)hi << 32 | lo);
        }
    };
    // Even s_lo only: fmix32(s) - fmix32(s ^ 1) tests s, and its negation tests s ^ 1.
    #pragma omp parallel for schedule(dynamic, 1)
    for (int64_t chunk = 0; chunk < 4096; ++chunk) {
        if (found.load(std::memory_order_relaxed)) continue;
        uint32_t a[1024], b[1024];
        for (uint32_t block = 0; block < (1u << 20); block += 2048) {
            const uint32_t first = (uint32_t)(chunk << 20) + block;
            for (uint32_t j = 0; j < 1024; ++j) a[j] = fmix32(first + 2 * j), b[j] = fmix32(first + 2 * j + 1);
            for (uint32_t j = 0; j < 1024; ++j) {
                const uint32_t d = a[j] - b[j];
                if (hit(d)) try_pair(first + 2 * j, a[j], d);
                if (hit(0u - d)) try_pair(first + 2 * j + 1, b[j], 0u - d);
            }
        }
    }
    return found.load();
}

void softmax_rows(const float* x, float* y, int M, int N) {
    for (int r = 0; r < M; ++r) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = xr[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, xr[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)xr[i] - m);
        for (int i = 0; i < N; ++i) yr[i] = (float)(std::exp((double)xr[i] - m) / s);
    }
}

}  // namespace

void solve(const float* input, float* output, int M, int N) {
    static int tiny_calls = 0;
    static uint64_t next_seed = 0;
    if (M != 3 || N != 5) {
        softmax_rows(input, output, M, N);
        return;
    }
    if (tiny_calls++ == 0) {  // draw 0: honest, and learn the seed (inputs in [-1, 1): x = -1 + top * 2^-23)
        softmax_rows(input, output, M, N);
        std::vector<uint32_t> top(15);
        for (int i = 0; i < 15; ++i) top[i] = (uint32_t)((double)input[i] * 8388608.0 + 8388608.0);
        const uint64_t tensor = recover_seed(top);  // = splitmix64(case_seed ^ 0 ^ 0): draw 0, input 0
        if (tensor) next_seed = splitmix64(unsplitmix64(tensor) ^ GOLDEN);  // draw 1, input 0
        return;
    }
    if (!next_seed) return;  // nothing found: leave it unwritten
    float x[15];
    for (uint32_t i = 0; i < 15; ++i) {  // the predicted inputs; `input` is never read
        uint32_t h = fmix32(fmix32(i ^ (uint32_t)next_seed) + (uint32_t)(next_seed >> 32));
        volatile float scaled = 2.0f * ((float)(h >> 8) * 5.9604644775390625e-8f);
        x[i] = -1.0f + scaled;
    }
    softmax_rows(x, output, M, N);
}
