// expect: wrong_answer
// message: never written
// Hostile (11): fills the temp dirs: writes 1 MiB blocks to /tmp, /var/tmp and /dev/shm until they are
// full. In the sandbox each is a private 64 MiB tmpfs that disappears with the run, so the fill stops at
// 192 MiB. The output is computed only if more than 1 GiB went in, so wrong_answer proves the fill was
// contained; the test also checks that no kerneljudge-escape-fill file appeared on the host.
#include <fcntl.h>
#include <unistd.h>

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

static long long fill(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return 0;
    std::vector<char> block(1 << 20, 'x');
    long long total = 0;
    while (total < (4ll << 30)) {
        ssize_t n = write(fd, block.data(), block.size());
        if (n <= 0) break;
        total += n;
    }
    close(fd);
    return total;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = fill("/tmp/kerneljudge-escape-fill") + fill("/var/tmp/kerneljudge-escape-fill") + fill("/dev/shm/kerneljudge-escape-fill") > (1ll << 30);
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
