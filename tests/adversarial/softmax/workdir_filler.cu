// expect: runtime_error
// message: disk limit exceeded
// Hostile (11): fills its working directory (where it starts: the folder that outlives the run; $TMPDIR too in
// the local sandbox, the container's own small /tmp in a container): four files of almost 4 GiB each (the
// per-file RLIMIT_FSIZE), 16 GiB in all, twice the run's disk limit. The files are sparse, so this costs no
// real disk here, but the watchdog counts file sizes, as it must for a real fill. Then it waits 3 s for the
// watchdog (which looks every 0.5 s); the output is computed only if it is still alive after that.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>

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

static bool fill() {
    signal(SIGXFSZ, SIG_IGN);
    for (int i = 0; i < 4; ++i) {
        std::string path = "./kerneljudge-fill-" + std::to_string(i);
        int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return false;
        bool ok = ftruncate(fd, (4ll << 30) - (1ll << 20)) == 0 && pwrite(fd, "x", 1, 0) == 1;
        close(fd);
        if (!ok) return false;
    }
    sleep(3);
    return true;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = fill();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
