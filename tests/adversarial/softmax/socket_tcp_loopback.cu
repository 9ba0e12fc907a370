// expect: wrong_answer
// message: never written
// Hostile (12): opens a TCP socket to the listener the test runs on 127.0.0.1:47111 (and [::1]:47111) and
// sends a line. The sandbox's network namespace has no route anywhere, loopback included. The output is
// computed only if a connection was made and the line sent; the test checks the listener heard nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
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

static bool reach() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(47111);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const char line[] = "kerneljudge-escape: tcp\n";
    bool ok = connect(fd, (sockaddr*)&a, sizeof a) == 0 && send(fd, line, sizeof line - 1, 0) > 0;
    close(fd);
    return ok;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = reach();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
