# expect: rejected
# mode: submit
# message: cupy.cuda.get_elapsed_time may not be assigned
# Hostile (cupy): patches CuPy's event timer, which the Python worker uses for its claim. Refused by the source
# check (a module's names may be used, not replaced); were it to pass, a claim of a microsecond against the
# judge's clock is a forged timer.
import cupy

cupy.cuda.get_elapsed_time = lambda start, end: 0.001
K = cupy.RawKernel(r"""extern "C" __global__ void k(const float* x, float* y, int n) {}""", "k")


def solve(input, output, M, N):
    K((1,), (1,), (input, output, cupy.int32(N)))
