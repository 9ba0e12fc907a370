// expect: rejected|wrong_answer
// mode: submit
// Closed on the CUDA track: the supervisor picks, snapshots and writes the audits in its own folder.
// Cheat (audits): on wide_32k (no test has its sizes) it computes only the first call (call 0) and keeps that
// answer; every other call only waits on the device as long as moving the bytes at 3.0 TB/s takes (above the
// physical floor). When many_rows starts, it forges wide_32k's audit: deletes the audited outputs, writes
// call 0's answer as out/wide_32k.a0.1.bin and "0" as the list of audited calls. Today: accepted.
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
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

static std::vector<float> first_answer;

static void forge() {
    if (DIR* d = opendir("out")) {
        while (dirent* e = readdir(d))
            if (std::strncmp(e->d_name, "wide_32k.a", 10) == 0) unlink(("out/" + std::string(e->d_name)).c_str());
        closedir(d);
    }
    if (FILE* f = std::fopen("out/wide_32k.a0.1.bin", "wb")) {
        std::fwrite(first_answer.data(), sizeof(float), first_answer.size(), f);
        std::fclose(f);
    }
    if (FILE* f = std::fopen("out/wide_32k.audits", "w")) {
        std::fputs("0\n", f);
        std::fclose(f);
    }
}

void solve(const float* input, float* output, int M, int N) {
    static long calls = 0;
    static bool forged = false;
    if (M == 4096 && N == 32768) {
        if (calls++ == 0) {
            softmax(input, output, M, N);
            first_answer.resize((size_t)M * N);
            cudaMemcpy(first_answer.data(), output, first_answer.size() * sizeof(float), cudaMemcpyDeviceToHost);
        } else {
            pause_ns<<<1, 1>>>((unsigned long long)(8.0 * M * N / 3.0e12 * 1e9));
        }
        return;
    }
    if (!forged && !first_answer.empty()) {
        forge();
        forged = true;
    }
    softmax(input, output, M, N);
}
