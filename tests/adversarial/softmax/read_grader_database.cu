// expect: wrong_answer
// message: never written
// Hostile (12): reads the grader's database: the test stores a submission whose source holds a marker in a
// database made by grader.storage under /var/lib/kerneljudge-sentinel/data (as a shared judge would set
// KERNELJUDGE_DATA), and this looks for the marker there (the .db and its WAL) and at the default places.
// The output is computed only if the marker was found.
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

static bool has_marker(const std::string& path) {
    int fd = open(path.c_str(), O_RDONLY);
    if (fd < 0) return false;
    std::string data;
    char buf[1 << 16];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && data.size() < (64u << 20)) data.append(buf, n);
    close(fd);
    return data.find("kerneljudge-db-secret") != std::string::npos;
}

static bool steal() {
    const char* dbs[] = {"/var/lib/kerneljudge-sentinel/data/kerneljudge.db",
                         "/root/.local/share/kerneljudge/kerneljudge.db", "/var/lib/kerneljudge/kerneljudge.db"};
    bool any = false;
    for (const char* db : dbs) any |= has_marker(db) || has_marker(std::string(db) + "-wal");
    return any;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = steal();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
