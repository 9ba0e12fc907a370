# expect: wrong_answer
# message: wrote 1020 bytes past the end of C (first at element 1)
# Bug (bounds, cupy): the CUDA rung's kernel without `if (i < N)`, in blocks of 256: the last block writes up to
# 255 elements past the end of C. CuPy's arrays are views of the CUDA supervisor's buffers, so the canary after C
# catches it on the first test (N = 1).
import cupy

KERNEL = cupy.RawKernel(
    r"""
extern "C" __global__ void vector_add(const float* A, const float* B, float* C) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    C[i] = A[i] + B[i];
}
""",
    "vector_add",
)
THREADS = 256


def solve(A: cupy.ndarray, B: cupy.ndarray, C: cupy.ndarray, N: int) -> None:
    KERNEL(((N + THREADS - 1) // THREADS,), (THREADS,), (A, B, C))
