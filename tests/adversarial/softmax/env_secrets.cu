// expect: wrong_answer
// message: never written
// Hostile (12): looks for secrets and seeds in environment variables: its own environment (the test puts
// KERNELJUDGE_TEST_SECRET and a fake AWS key in the grader's), and the environments of the grader and of
// init through /proc. The sandbox passes only PATH, HOME, TMPDIR and LANG (and the CUDA paths on that
// track). The output is computed only if the marker or a seed-like variable turned up.
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

extern char** environ;

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

static bool file_has(const std::string& path, const char* needle) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    std::string data;
    char buf[4096];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) data.append(buf, n);
    close(fd);
    return data.find(needle) != std::string::npos;
}

static bool steal() {
    bool any = std::getenv("KERNELJUDGE_TEST_SECRET") || std::getenv("AWS_SECRET_ACCESS_KEY");
    for (char** e = environ; *e; ++e)
        any |= std::strstr(*e, "kerneljudge-env-secret") || std::strstr(*e, "SEED") || std::strstr(*e, "seed");
    any |= file_has("/proc/" + std::to_string(getppid()) + "/environ", "kerneljudge-env-secret");
    any |= file_has("/proc/1/environ", "kerneljudge-env-secret");
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = steal();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
