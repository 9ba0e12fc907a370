# Rung 1 (CuPy) -- 01_naive.cu as a cupy.RawKernel: one thread per row, three passes, a float32 running sum.
#
# The same kernel text as the CUDA rung, compiled by NVRTC at the first call; neighbouring threads read
# addresses N floats apart, so nothing coalesces. The next rung gives each row a block.
import cupy

KERNEL = cupy.RawKernel(
    r"""
#ifndef INFINITY  // NVRTC defines no INFINITY (nvcc gets it from math.h)
#define INFINITY __int_as_float(0x7f800000)
#endif
extern "C" __global__ void softmax_rows(const float* x, float* y, int M, int N) {
    const int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    const float* in = x + (long long)row * N;
    float* out = y + (long long)row * N;
    float m = -INFINITY;
    for (int j = 0; j < N; ++j) m = fmaxf(m, in[j]);
    float sum = 0.f;
    for (int j = 0; j < N; ++j) sum += expf(in[j] - m);
    for (int j = 0; j < N; ++j) out[j] = expf(in[j] - m) / sum;
}
""",
    "softmax_rows",
)
THREADS = 128


def solve(input: cupy.ndarray, output: cupy.ndarray, M: int, N: int) -> None:
    KERNEL(((M + THREADS - 1) // THREADS,), (THREADS,), (input, output, cupy.int32(M), cupy.int32(N)))
