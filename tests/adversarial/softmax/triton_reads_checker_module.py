# expect: rejected
# message: `import grader.judge.check` is not allowed
# Hostile (triton): imports the judge's checker, to read its tolerance or call the reference. Refused by the
# import check; at run time the worker's audit hook refuses imports of the judge's modules and opening its files.
import triton
import grader.judge.check


def solve(input, output, M, N):
    pass
