// expect: wrong_answer
// message: never written
// Hostile (12): writes files outside its working directory: into a world-writable (1777) folder the test
// made on the root filesystem, /run/lock and /var/lock (world-writable on most hosts), the runs folder
// above its working directory, /etc and root's home. The root filesystem is read-only in the sandbox and
// the rest belongs to root. The output is computed only if one of those files could be created. It also
// writes to /tmp, /var/tmp and /dev/shm, which succeeds inside the sandbox's private tmpfs and must not
// reach the host: the test checks that no kerneljudge-escape file exists anywhere it looks.
#include <fcntl.h>
#include <unistd.h>

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

static bool create(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    bool ok = write(fd, "escaped\n", 8) == 8;
    close(fd);
    return ok;
}

static bool escape() {
    create("/tmp/kerneljudge-escape");
    create("/var/tmp/kerneljudge-escape");
    create("/dev/shm/kerneljudge-escape");
    const char* outside[] = {"/var/lib/kerneljudge-sentinel/open/kerneljudge-escape", "/run/lock/kerneljudge-escape",
                             "/var/lock/kerneljudge-escape", "../kerneljudge-escape", "/etc/kerneljudge-escape",
                             "/root/kerneljudge-escape"};
    bool any = false;
    for (const char* p : outside) any |= create(p);
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = escape();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
