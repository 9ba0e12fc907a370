// expect: wrong_answer
// mode: submit
// message: returned a wrong output
// Cheat (audits): the CUDA twin of final_call_evader.cpp. On wide_32k (a size no test has) its first call is
// honest and then spins 600 ms on the GPU, past the quarter of the 1 s budget that ends the warm-up, so the
// warm-up is that one call; every later call writes 1/N everywhere and spins to one fixed length above the
// physical floor, so thirty samples of one length end the sampling at once, and it is honest again in call 31,
// the one it predicts to be the last. The audits are a uniform draw of the samples made as each call returns and
// the sampling ends after a random tail: at most one sample is right and three are audited.
#include <cuda_runtime.h>

__global__ void softmax_rows(const float* x, float* y, int M, int N) {
    __shared__ float red[256];
    for (int r = blockIdx.x; r < M; r += gridDim.x) {
        const float* xr = x + (size_t)r * N;
        float* yr = y + (size_t)r * N;
        float m = -INFINITY;
        for (int i = threadIdx.x; i < N; i += blockDim.x) m = fmaxf(m, xr[i]);
        red[threadIdx.x] = m;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] = fmaxf(red[threadIdx.x], red[threadIdx.x + s]);
            __syncthreads();
        }
        m = red[0];
        __syncthreads();
        float sum = 0.0f;
        for (int i = threadIdx.x; i < N; i += blockDim.x) sum += expf(xr[i] - m);
        red[threadIdx.x] = sum;
        __syncthreads();
        for (int s = blockDim.x / 2; s > 0; s >>= 1) {
            if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
            __syncthreads();
        }
        sum = red[0];
        __syncthreads();
        for (int i = threadIdx.x; i < N; i += blockDim.x) yr[i] = expf(xr[i] - m) / sum;
    }
}

__global__ void fill(float* y, size_t n, float value) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) y[i] = value;
}

__global__ void spin_ns(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

extern "C" void solve(const float* input, float* output, int M, int N) {
    if (M != 4096 || N != 32768) {
        softmax_rows<<<M < 65536 ? M : 65536, 256>>>(input, output, M, N);
        return;
    }
    static long calls = 0;
    const long call = calls++;  // 0: the warm-up; 1-30: the samples; 31: the last call
    if (call == 0 || call == 31) {
        softmax_rows<<<M, 256>>>(input, output, M, N);
        spin_ns<<<1, 1>>>(call == 0 ? 600000000ull : 300000ull);
        return;
    }
    fill<<<1024, 256>>>(output, (size_t)M * N, 1.0f / N);
    spin_ns<<<1, 1>>>(300000ull);
}
