// expect: wrong_answer
// message: never written
// Hostile (12): reads files outside its working directory: the sentinel secrets the test planted (mode
// 0600, root's) under /tmp (hidden by the sandbox's private /tmp) and under /var/lib (not hidden: the uid
// switch must stop it), the grader's environment and memory through /proc, root's home, /etc/shadow. The
// output is computed only if any of them gave up a byte. (The problem's reference.py and the solutions are
// readable, by design: they are public, and no expected output exists anywhere the sandbox can see.)
#include <fcntl.h>
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

static bool readable(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    char c;
    bool ok = read(fd, &c, 1) == 1;
    close(fd);
    return ok;
}

static bool steal() {
    const std::string parent = std::to_string(getppid());
    const char* paths[] = {"/tmp/kerneljudge-sentinel/secret", "/var/lib/kerneljudge-sentinel/secret",
                           "/etc/shadow", "/root/.bash_history", "/root/.cache/kerneljudge"};
    bool any = false;
    for (const char* p : paths) any |= readable(p);
    // In a container the parent and pid 1 are the container's own init (docker-init, as the run's uid, with the
    // container's environment; the supervisor is on the host, in no namespace the container can name): reading
    // them steals nothing, so these looks are the local sandbox's alone (as in read_outside_files.cpp).
    if (access("/.dockerenv", F_OK) != 0) {
        any |= readable("/proc/1/environ");
        any |= readable("/proc/" + parent + "/environ");
        any |= readable("/proc/" + parent + "/mem");
    }
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = steal();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
