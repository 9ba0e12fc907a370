# expect: wrong_answer
# mode: submit
# Hostile (triton): right at every test's sizes, wrong (each output halved) at the three benchmark sizes no test
# has, hoping that the JIT stage's untimed call at those sizes (whose outputs are not checked) is all that
# ever runs there unaudited. The benchmarks' audits check timed calls at those sizes: wrong_answer.
import triton
import triton.language as tl

MAX_BLOCK = 8192
BENCHMARK_ONLY = {(8192, 8192), (4096, 32768), (65536, 1024)}  # one_row_1m's sizes are a test's too


@triton.jit
def softmax_rows(x, y, n, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    columns = tl.arange(0, BLOCK)
    for start in range(0, n, BLOCK):
        m = tl.maximum(m, tl.load(x + row * n + start + columns, mask=start + columns < n, other=float("-inf")))
    row_max = tl.max(m, axis=0)
    total = tl.zeros([BLOCK], tl.float32)
    for start in range(0, n, BLOCK):
        v = tl.load(x + row * n + start + columns, mask=start + columns < n, other=float("-inf"))
        total += tl.exp(v - row_max)
    s = tl.sum(total, axis=0)
    for start in range(0, n, BLOCK):
        inside = start + columns < n
        v = tl.load(x + row * n + start + columns, mask=inside, other=float("-inf"))
        tl.store(y + row * n + start + columns, scale * tl.exp(v - row_max) / s, mask=inside)


def solve(input, output, M, N):
    scale = 0.5 if (M, N) in BENCHMARK_ONLY else 1.0
    softmax_rows[(M,)](input, output, N, scale, BLOCK=min(triton.next_power_of_2(N), MAX_BLOCK))
