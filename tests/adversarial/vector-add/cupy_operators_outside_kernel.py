# expect: rejected
# message: cupy_add
# Hostile (cupy): adds with CuPy's operators (`A + B` builds CuPy's own kernel cupy_add) instead of a kernel of
# its own. The source names no routine, so the import check lets it through; the worker refuses CuPy's own
# kernels being built inside solve.
import cupy


def solve(A, B, C, N):
    C[...] = A + B
