// expect: wrong_answer|runtime_error
// message: one_element
// Hostile (11): fills the disk past the run's 8 GiB limit where the watchdog does not look: it creates files
// in its working directory, unlinks them at once and keeps them open, then reserves 3 GiB of real blocks in
// each of three (fallocate: instant, no data written), 9 GiB in all. The output is computed only if all of
// it was granted and the run is still alive 3 s later, so today it is accepted. The space comes back when
// the process dies. The working directory is now a tmpfs of the run's disk limit (grader/sandbox/workspace.py):
// the reservation fails with ENOSPC and the output stays unwritten (wrong_answer); a watchdog kill is also fine.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <string>
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

static bool fill() {
    signal(SIGXFSZ, SIG_IGN);
    static std::vector<int> held;
    for (int i = 0; i < 3; ++i) {
        std::string path = "kerneljudge-hidden-" + std::to_string(i);
        int fd = open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fd < 0) return false;
        unlink(path.c_str());
        held.push_back(fd);
        if (fallocate(fd, 0, 0, 3ll << 30) != 0) return false;
    }
    sleep(3);
    return true;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = fill();
    if (!escaped) return;  // the defence held: leave the output unwritten
    softmax(input, output, M, N);
}
