# expect: runtime_error
# message: the kernel's line 7
# Honest mistake (cupy): the kernel's source names a variable it never declared, so NVRTC refuses it at the
# kernel's first launch, inside solve. The verdict names the line within the kernel's source string, its text
# and NVRTC's own message, with none of the worker's or CuPy's frames.
import cupy

SOFTMAX = cupy.RawKernel(
    r"""
extern "C" __global__ void softmax_rows(const float* x, float* y, int n) {
    long long row = blockIdx.x;
    float m = -3.402823466e38f, sum = 0.0f;
    for (int c = 0; c < n; ++c) m = fmaxf(m, x[row * n + c]);
    for (int c = 0; c < n; ++c) sum += expf(x[row * n + c] - m);
    for (int c = 0; c < n; ++c) y[row * n + c] = expf(x[row * n + c] - m) / total;
}
""",
    "softmax_rows",
)


def solve(input, output, M, N):
    SOFTMAX((M,), (1,), (input, output, cupy.int32(N)))
