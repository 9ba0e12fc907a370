// expect: wrong_answer
// message: input W was modified
// Cheat: computes Y right, then changes W[0] (an int8 input), as a kernel that reuses an input as scratch would.
// The output passes; the int8 input that comes back does not.
#include <cstdint>

__global__ void gemm(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x, i = blockIdx.y;
    if (j >= N) return;
    const float* x = X + (size_t)i * K;
    float amax = 0.0f;
    for (int k = 0; k < K; ++k) amax = fmaxf(amax, fabsf(x[k]));
    const float scale = amax / 127.0f;
    int acc = 0;
    for (int k = 0; k < K; ++k)
        acc += (int)(scale > 0.0f ? (int8_t)rintf(x[k] / scale) : 0) * (int)W[(size_t)j * K + k];
    Y[(size_t)i * N + j] = (scale * sw[j]) * (float)acc;
}

__global__ void scribble(const int8_t* W) {
    int8_t* w = const_cast<int8_t*>(W);
    w[0] = (int8_t)(w[0] ^ 0x01);
}

extern "C" void solve(const float* X, const int8_t* W, const float* sw, float* Y, int M, int N, int K) {
    gemm<<<dim3((N + 127) / 128, M), 128>>>(X, W, sw, Y, M, N, K);
    scribble<<<1, 1>>>(W);  // after the GEMM on the same stream: the answer used the original W
}
