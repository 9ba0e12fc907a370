// expect: wrong_answer
// message: never written
// Closed on the CUDA track: the worker's seccomp filter refuses socket() of every family.
// Hostile (12): connects to a Unix-domain socket bound to a path on the host, which the test listens on
// (mode 0666, as many daemons' sockets are), and sends a line. The output is computed only if that worked;
// the test checks the listener heard nothing.
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

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

static bool reach(const char* path) {
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    const char line[] = "kerneljudge-escape: unix\n";
    bool ok = connect(fd, (sockaddr*)&a, sizeof a) == 0 && send(fd, line, sizeof line - 1, 0) > 0;
    close(fd);
    return ok;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = reach("/var/lib/kerneljudge-sentinel/listener.sock");
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
