// expect: wrong_answer
// message: bytes past the end of W
// Bug (bounds): writes the byte two past the end of W, an int8 input. On the GPU the guards are checked as
// 16-bit words from the first even byte after each buffer, so an int8 buffer of odd length (one_element's W
// is 1 byte) must not start its guard on an odd byte: that read would be misaligned. The answer is right.
#include <cstdint>

__global__ void quantize_rows(const float* X, int8_t* q, float* s, int K) {
    if (threadIdx.x != 0) return;
    const float* x = X + (size_t)blockIdx.x * K;
    float amax = 0.0f;
    for (int k = 0; k < K; ++k) amax = fmaxf(amax, fabsf(x[k]));
    const float scale = amax / 127.0f;
    for (int k = 0; k < K; ++k) q[(size_t)blockIdx.x * K + k] = scale > 0.0f ? (int8_t)rintf(x[k] / scale) : 0;
    s[blockIdx.x] = scale;
}

__global__ void gemm(const int8_t* q, const float* s, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j < N) {
        int acc = 0;
        for (int k = 0; k < K; ++k) acc += (int)q[(size_t)i * K + k] * (int)W[(size_t)j * K + k];
        Y[(size_t)i * N + j] = (s[i] * sw[j]) * (float)acc;
    }
    if (i == 0 && j == 0) const_cast<int8_t*>(W)[(size_t)N * K + 1] = 0x55;
}

extern "C" void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    static int8_t* q = nullptr;
    static float* s = nullptr;
    static size_t q_bytes = 0, rows = 0;
    if ((size_t)M * K > q_bytes) cudaFree(q), cudaMalloc(&q, (size_t)M * K), q_bytes = (size_t)M * K;
    if ((size_t)M > rows) cudaFree(s), cudaMalloc(&s, M * sizeof(float)), rows = M;
    quantize_rows<<<M, 32>>>(X, q, s, K);
    gemm<<<dim3((N + 127) / 128, M), 128>>>(q, s, W, sw, Y, M, N, K);
}
