// Rung 2 -- a block per token: its cosines and sines once in shared memory, then every head, float4 at a time.
//
// Over rung 1: the D/2 angles of a token are the same for all its H + HK heads, so the block's first D/2
// threads compute them once: pos * theta_i in double (theta_i from a table computed once per call), reduced
// to [-pi, pi] in double, then sincosf in float32, which is accurate to an ulp there (a float angle of 10^6
// radians would be off by 0.03). Then the block walks the token's Q and K rows; when D/2 is a multiple of 4
// (and the buffers are 16-byte aligned) each thread rotates four pairs at once, loading float4s from both
// halves. The token's heads are contiguous, so the loads are coalesced and Q and K cross DRAM once.
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

constexpr int THREADS = 128;
constexpr int MAX_HALF = 128;  // D <= 256

__device__ double g_theta[MAX_HALF];  // 10000^(-2i/D) for the current D

__global__ void frequencies(int D) {
    const int i = threadIdx.x;
    if (i < D / 2) g_theta[i] = exp2(-2.0 * i / D * log2(10000.0));
}

template <bool VEC>
__device__ __forceinline__ void rotate_rows(const float* __restrict__ x, float* __restrict__ out, int heads, int half,
                                            const float* c, const float* s) {
    if constexpr (VEC) {
        const int quads = half / 4;  // float4s per half-row
        for (int u = threadIdx.x; u < heads * quads; u += THREADS) {
            const int h = u / quads, q = u % quads;
            const float4* x1 = reinterpret_cast<const float4*>(x + (size_t)h * 2 * half) + q;
            const float4* x2 = x1 + quads;
            const float4 a = __ldcs(x1), b = __ldcs(x2);
            const float4 cc = reinterpret_cast<const float4*>(c)[q], ss = reinterpret_cast<const float4*>(s)[q];
            float4* o1 = reinterpret_cast<float4*>(out + (size_t)h * 2 * half) + q;
            __stcs(o1, make_float4(a.x * cc.x - b.x * ss.x, a.y * cc.y - b.y * ss.y, a.z * cc.z - b.z * ss.z,
                                   a.w * cc.w - b.w * ss.w));
            __stcs(o1 + quads, make_float4(b.x * cc.x + a.x * ss.x, b.y * cc.y + a.y * ss.y, b.z * cc.z + a.z * ss.z,
                                           b.w * cc.w + a.w * ss.w));
        }
    } else {
        for (int u = threadIdx.x; u < heads * half; u += THREADS) {
            const int h = u / half, i = u % half;
            const size_t at = (size_t)h * 2 * half + i;
            const float a = x[at], b = x[at + half];
            out[at] = a * c[i] - b * s[i];
            out[at + half] = b * c[i] + a * s[i];
        }
    }
}

template <bool VEC>
__global__ void __launch_bounds__(THREADS) rope_tokens(const float* __restrict__ Q, const float* __restrict__ K,
                                                       const int* __restrict__ pos, float* __restrict__ Q_out,
                                                       float* __restrict__ K_out, int H, int HK, int D) {
    __shared__ __align__(16) float c[MAX_HALF];
    __shared__ __align__(16) float s[MAX_HALF];
    const int t = blockIdx.x, half = D / 2;
    for (int i = threadIdx.x; i < half; i += THREADS) {
        const double a = (double)pos[t] * g_theta[i];
        const double turns = rint(a * 0.15915494309189535);  // 1 / (2 pi)
        const double r = fma(-turns, 2.4492935982947064e-16, fma(-turns, 6.283185307179586, a));  // 2 pi, hi + lo
        sincosf((float)r, &s[i], &c[i]);
    }
    __syncthreads();
    rotate_rows<VEC>(Q + (size_t)t * H * D, Q_out + (size_t)t * H * D, H, half, c, s);
    rotate_rows<VEC>(K + (size_t)t * HK * D, K_out + (size_t)t * HK * D, HK, half, c, s);
}

static bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

extern "C" void solve(const float* Q, const float* K, const int* pos, float* Q_out, float* K_out, int T, int H, int HK,
                      int D) {
    static int last_D = 0;  // the frequency table depends on D alone
    if (D != last_D) {
        frequencies<<<1, MAX_HALF>>>(D);
        last_D = D;
    }
    if ((D / 2) % 4 == 0 && aligned16(Q) && aligned16(K) && aligned16(Q_out) && aligned16(K_out))
        rope_tokens<true><<<T, THREADS>>>(Q, K, pos, Q_out, K_out, H, HK, D);
    else
        rope_tokens<false><<<T, THREADS>>>(Q, K, pos, Q_out, K_out, H, HK, D);
}
