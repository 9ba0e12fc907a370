// expect: rejected|wrong_answer
// mode: submit
// honest_floor_us: wide_32k 100
// Cheat (audits): on wide_32k (no test has its sizes) it computes honestly until out/wide_32k.audits lists 2
// calls, and from then on only waits, on the device, as long as moving the benchmark's bytes at 3.0 TB/s would
// take (above the physical floor, computed from a peak of 3.35 TB/s on an H100 or more on an H200), writing
// nothing. When the in-process harness wrote that record beside the submission, the random picks could use the
// audits up before the last call (accepted). The audit record is now the supervisor's and never visible, and the
// audits are a draw no call uses up: it computes every call, an honest time.
#include <cstdio>
// A correct row softmax: one block of 256 threads per row (grid-stride over rows), float sums.
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

static void softmax(const float* x, float* y, int M, int N, cudaStream_t stream = 0) {
    softmax_rows<<<M < 65536 ? M : 65536, 256, 0, stream>>>(x, y, M, N);
}

__global__ void pause_ns(unsigned long long ns) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(500);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

static int audited_calls() {
    FILE* f = std::fopen("out/wide_32k.audits", "r");
    if (!f) return 0;
    int lines = 0, c;
    while ((c = std::fgetc(f)) != EOF) lines += c == '\n';
    std::fclose(f);
    return lines;
}

void solve(const float* input, float* output, int M, int N) {
    if (M == 4096 && N == 32768 && audited_calls() >= 2) {
        pause_ns<<<1, 1>>>((unsigned long long)(8.0 * M * N / 3.0e12 * 1e9));
        return;
    }
    softmax(input, output, M, N);
}
