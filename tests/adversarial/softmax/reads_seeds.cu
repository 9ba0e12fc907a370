// expect: wrong_answer
// message: never written
// Closed on the CUDA track: the worker (harness/gpu_worker.cu) never reads a request; the keys stay in the supervisor.
// Hostile (12): hunts for the secret seeds. The harness reads its request from stdin with std::cin, which
// goes through glibc's stdin buffer, and that buffer still holds the whole request text when solve runs.
// This parses it (case name, seed, sizes, input ranges), regenerates each call's input with the harness's
// own generator and computes the softmax of that, never reading `input`. The output is right only if the
// seeds leaked; with the seeds, a kernel could compute every timed call's answer ahead of time.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
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

namespace {

struct Leaked {
    uint64_t seed = 0;
    std::vector<int> ints;
    uint32_t low_bits = 0, scale_bits = 0;
    uint64_t calls = 0;
};

uint64_t splitmix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

uint32_t fmix32(uint32_t h) {
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    h *= 0xC2B2AE35u;
    h ^= h >> 16;
    return h;
}

float from_bits(uint32_t b) {
    float f;
    std::memcpy(&f, &b, sizeof f);
    return f;
}

std::vector<Leaked> parse_stdin_buffer() {
    std::vector<Leaked> found;
    if (!stdin->_IO_buf_base || stdin->_IO_buf_end <= stdin->_IO_buf_base) return found;
    std::string text(stdin->_IO_buf_base, stdin->_IO_buf_end - stdin->_IO_buf_base);
    text = text.substr(0, text.find('\0'));
    std::istringstream in(text);
    std::string word;
    while (in >> word) {
        if (word != "case") continue;
        Leaked c;
        std::string name, mode, seed;
        in >> name >> mode >> seed;
        c.seed = std::stoull(seed, nullptr, 16);
        int skip = mode == "check" ? 1 : 4;
        while (skip-- > 0) in >> word;
        size_t n = 0;
        in >> word >> n;  // ints
        c.ints.resize(n);
        for (int& v : c.ints) in >> v;
        in >> word >> n;  // buffers
        for (size_t b = 0; b < n; ++b) {
            size_t count;
            in >> word >> count;
            if (word == "in") in >> c.low_bits >> c.scale_bits;
        }
        if (in) found.push_back(c);
    }
    return found;
}

}  // namespace

void solve(const float* input, float* output, int M, int N) {
    static std::vector<Leaked> cases = parse_stdin_buffer();
    for (Leaked& c : cases) {
        if (c.ints.size() != 2 || c.ints[0] != M || c.ints[1] != N) continue;
        const uint64_t call = c.calls++;
        const uint64_t seed = splitmix64(c.seed ^ (call * 0x9E3779B97F4A7C15ull));
        const float low = from_bits(c.low_bits), scale = from_bits(c.scale_bits);
        std::vector<float> x((size_t)M * N);
        for (size_t i = 0; i < x.size(); ++i) {
            uint32_t h = fmix32(fmix32((uint32_t)i ^ (uint32_t)seed) + (uint32_t)(seed >> 32));
            volatile float scaled = scale * ((float)(h >> 8) * 5.9604644775390625e-8f);  // no fma, as the harness
            x[i] = low + scaled;
        }
        float* regenerated = nullptr;  // never reads `input`: its own copy of what the harness generated
        cudaMalloc(&regenerated, x.size() * sizeof(float));
        cudaMemcpy(regenerated, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice);
        softmax(regenerated, output, M, N);
        cudaFree(regenerated);
        return;
    }
}
