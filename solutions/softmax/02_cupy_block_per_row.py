# Rung 2 (CuPy) -- a RawKernel with a block of 256 threads per row and shared-memory reductions.
#
# Over rung 1: the 256 threads of a row's block read consecutive floats (coalesced), reduce their maxima and
# then their sums through warp shuffles and one shared-memory step, and write the row; long rows get the whole
# GPU's bandwidth as soon as there are enough rows to fill it (03_block_per_row.cu's idea).
import cupy

KERNEL = cupy.RawKernel(
    r"""
#ifndef INFINITY  // NVRTC defines no INFINITY (nvcc gets it from math.h)
#define INFINITY __int_as_float(0x7f800000)
#endif
__device__ float block_reduce(float v, bool is_max, float* shared) {
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0) shared[warp] = v;
    __syncthreads();
    v = lane < blockDim.x / 32 ? shared[lane] : (is_max ? -INFINITY : 0.f);
    for (int o = 16; o > 0; o >>= 1) {
        const float other = __shfl_xor_sync(0xffffffffu, v, o);
        v = is_max ? fmaxf(v, other) : v + other;
    }
    return v;
}

extern "C" __global__ void softmax_block_per_row(const float* x, float* y, int N) {
    __shared__ float shared[32];
    const float* in = x + (long long)blockIdx.x * N;
    float* out = y + (long long)blockIdx.x * N;
    float m = -INFINITY;
    for (int j = threadIdx.x; j < N; j += blockDim.x) m = fmaxf(m, in[j]);
    m = block_reduce(m, true, shared);
    float sum = 0.f;
    for (int j = threadIdx.x; j < N; j += blockDim.x) sum += expf(in[j] - m);
    sum = block_reduce(sum, false, shared);
    const float scale = 1.f / sum;
    for (int j = threadIdx.x; j < N; j += blockDim.x) out[j] = expf(in[j] - m) * scale;
}
""",
    "softmax_block_per_row",
)
THREADS = 256


def solve(input: cupy.ndarray, output: cupy.ndarray, M: int, N: int) -> None:
    KERNEL((M,), (THREADS,), (input, output, cupy.int32(N)))
