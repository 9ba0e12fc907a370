# Rung 1 (CuPy) -- 01_naive.cu as a cupy.RawKernel: one thread per element, compiled by NVRTC at the first call.
#
# The same kernel text as the CUDA rung; CuPy passes each array as its device pointer and the size as an int32.
import cupy

KERNEL = cupy.RawKernel(
    r"""
extern "C" __global__ void vector_add(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C, int N) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < N) C[i] = A[i] + B[i];
}
""",
    "vector_add",
)
THREADS = 256


def solve(A: cupy.ndarray, B: cupy.ndarray, C: cupy.ndarray, N: int) -> None:
    KERNEL(((N + THREADS - 1) // THREADS,), (THREADS,), (A, B, C, cupy.int32(N)))
