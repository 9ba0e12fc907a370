// The supervisor's input generator: a keyed PRF picks each call's seed, the counter-based generator of
// grader/run/inputs.py (bit for bit, and harness/platform.h's) fills each input from it.
//
// call seed   = SipHash-2-4(key, call index as 8 little-endian bytes), with a 128-bit secret key per case;
// tensor seed = splitmix64(call seed ^ param * PARAM_MIX)   (inputs.tensor_seed(call_seed, 0, param));
// element i   = low + scale * ((fmix32(fmix32(i ^ seed_lo) + seed_hi) >> 8) * 2^-24), float32 steps.
// The counter-based hash alone is invertible (a few values give back a tensor seed); the PRF makes that
// worthless: one call's seed says nothing about another's without the key, which never leaves the
// supervisor and the grader. Built with -ffp-contract=off: no fma, as in numpy and torch.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace kjg {

inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

// SipHash-2-4 of one 64-bit message word (8 bytes, little-endian) under the key (k0, k1).
inline uint64_t siphash24(uint64_t k0, uint64_t k1, uint64_t m) {
    uint64_t v0 = k0 ^ 0x736f6d6570736575ull, v1 = k1 ^ 0x646f72616e646f6dull;
    uint64_t v2 = k0 ^ 0x6c7967656e657261ull, v3 = k1 ^ 0x7465646279746573ull;
    auto round = [&] {
        v0 += v1, v1 = rotl(v1, 13), v1 ^= v0, v0 = rotl(v0, 32);
        v2 += v3, v3 = rotl(v3, 16), v3 ^= v2;
        v0 += v3, v3 = rotl(v3, 21), v3 ^= v0;
        v2 += v1, v1 = rotl(v1, 17), v1 ^= v2, v2 = rotl(v2, 32);
    };
    const uint64_t last = uint64_t(8) << 56;  // message length 8, no tail bytes
    for (uint64_t word : {m, last}) {
        v3 ^= word;
        round(), round();
        v0 ^= word;
    }
    v2 ^= 0xff;
    round(), round(), round(), round();
    return v0 ^ v1 ^ v2 ^ v3;
}

inline uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

inline uint64_t tensor_seed(uint64_t call_seed, uint64_t param) {
    return splitmix64(call_seed ^ (param * 0xC2B2AE3D27D4EB4Full));
}

inline uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

inline void fill_uniform(float* p, size_t n, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
    float low, scale;
    std::memcpy(&low, &low_bits, sizeof low);
    std::memcpy(&scale, &scale_bits, sizeof scale);
    const uint32_t lo = (uint32_t)seed, hi = (uint32_t)(seed >> 32);
    for (size_t i = 0; i < n; ++i) {
        uint32_t h = fmix32(fmix32((uint32_t)i ^ lo) + hi);
        float u = (float)(h >> 8) * 5.9604644775390625e-8f;  // exact: 24 bits times 2^-24
        p[i] = low + scale * u;
    }
}

}  // namespace kjg
