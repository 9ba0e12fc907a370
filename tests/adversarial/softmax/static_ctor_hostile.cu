// expect: wrong_answer
// message: never written
// Hostile (13): does its damage in a static constructor, which runs when the harness loads the library,
// before any test: leaves a daemon behind (double fork, new session) that retries the escapes for a minute,
// connects to the test's listener on 127.0.0.1:47111, reads the sentinel secrets, writes files outside its
// working directory, and reads environment variables. The output is computed only if anything worked;
// the test checks that the daemon is gone after the run and that nothing reached the listener or the disk.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
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

static bool connect_listener() {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return false;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(47111);
    inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
    const char line[] = "kerneljudge-escape: static constructor\n";
    bool ok = connect(fd, (sockaddr*)&a, sizeof a) == 0 && send(fd, line, sizeof line - 1, 0) > 0;
    close(fd);
    return ok;
}

static bool readable(const char* path) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    char c;
    bool ok = read(fd, &c, 1) == 1;
    close(fd);
    return ok;
}

static bool create(const char* path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    close(fd);
    return true;
}

static bool attempt() {
    bool any = connect_listener();
    any |= readable("/tmp/kerneljudge-sentinel/secret") | readable("/var/lib/kerneljudge-sentinel/secret");
    any |= create("/var/lib/kerneljudge-sentinel/open/kerneljudge-escape-ctor") |
           create("/run/lock/kerneljudge-escape-ctor") | create("../kerneljudge-escape-ctor");
    any |= std::getenv("KERNELJUDGE_TEST_SECRET") != nullptr;
    return any;
}

static bool g_escaped = false;

__attribute__((constructor)) static void on_load() {
    g_escaped = attempt();
    if (fork() == 0) {  // the daemon: out of the process group, orphaned, retrying for a minute
        setsid();
        if (fork() != 0) _exit(0);
        for (int i = 0; i < 60; ++i) {
            attempt();
            sleep(1);
        }
        _exit(0);
    }
}

void solve(const float* input, float* output, int M, int N) {
    if (!g_escaped) return;
    softmax(input, output, M, N);
}
