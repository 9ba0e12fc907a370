"""SpMV reference: y = A x for the CSR matrix whose row i holds entries row_ptr[i] .. row_ptr[i] + row_lengths[i]
- 1 of cols and vals, row_ptr being the exclusive scan of row_lengths; computed in float64.

Every function here keeps its shapes independent of the data (no number of entries read back to the host):
position p of the M * L entry buffers belongs to row searchsorted(row ends, p), and positions past the last
row's end land in a row M that is dropped.
"""

import torch

from grader.judge.precision import bf16, fp16


def _rows_of_entries(row_lengths, M, L, shift=0):
    """The row of each of the M * L buffer positions (M for the unused ones past the last entry), with the
    row starts moved `shift` rows (a null answer's off-by-one)."""
    ends = torch.cumsum(row_lengths, dim=0)
    if shift:
        ends = torch.cat([ends[shift:], ends[-1:].expand(shift)])
    positions = torch.arange(M * L, device=row_lengths.device)
    return torch.searchsorted(ends, positions, right=True)


def _row_sums(terms, rows, M):
    return terms.new_zeros(M + 1).index_add_(0, rows, terms)[:M]


def reference(row_lengths, cols, vals, x, M, N, L):
    return _row_sums(vals * x[cols], _rows_of_entries(row_lengths, M, L), M)


def baseline(row_lengths, cols, vals, x, M, N, L):
    """What PyTorch runs: a CSR tensor times x (cuSPARSE's SpMV on the GPU). row_ptr is the scan of the
    lengths; the entry buffers are passed whole, since the matrix reads only the first row_ptr[M] of them."""
    crow = torch.cat([cols.new_zeros(1), torch.cumsum(row_lengths, dim=0, dtype=cols.dtype)])
    matrix = torch.sparse_csr_tensor(crow, cols, vals, size=(M, N), check_invariants=False)
    return matrix @ x


def null_answers(row_lengths, cols, vals, x, M, N, L):
    """Cheap wrong answers the tolerance must reject."""
    rows = _rows_of_entries(row_lengths, M, L)
    y = _row_sums(vals * x[cols], rows, M)
    ends = torch.cat([torch.cumsum(row_lengths, dim=0), row_lengths.new_full((1,), -2)])  # row M: no entry is last
    is_last = torch.arange(M * L, device=x.device) == ends[rows] - 1
    answers = {"zeros": torch.zeros_like(y)}
    answers["the last entry of each row dropped"] = _row_sums(torch.where(is_last, 0.0, vals * x[cols]), rows, M)
    answers["x read at column + 1"] = _row_sums(vals * x[(cols + 1) % N], rows, M)
    if M > 1:
        answers["rows read from the wrong start (row_ptr off by one row)"] = _row_sums(
            vals * x[cols], _rows_of_entries(row_lengths, M, L, shift=1), M
        )
        first = torch.zeros_like(y)
        first[0] = y[0]
        answers["the first row only"] = first
    return answers


def _padded(row_lengths, cols, vals, x, M, L):
    """The products as an M x L matrix, row i's entries first and zeros after."""
    starts = torch.cumsum(row_lengths, dim=0) - row_lengths
    k = torch.arange(L, device=x.device)
    inside = k[None, :] < row_lengths[:, None]
    at = (starts[:, None] + k[None, :]).clamp(max=M * L - 1)
    return torch.where(inside, vals[at] * x[cols[at]], 0.0)


def admitted(row_lengths, cols, vals, x, M, N, L):
    """What correct float32 kernels compute (for `grader calibrate`): zeros after a row's end change no sum."""
    terms = _padded(row_lengths, cols, vals, x, M, L)
    running = torch.from_numpy(terms.cpu().numpy().cumsum(axis=1, dtype="float32")[:, -1]).to(x.device)
    pad = (-L) % 32
    lanes = torch.nn.functional.pad(terms, (0, pad)).reshape(M, -1, 32)
    strided = torch.from_numpy(lanes.cpu().numpy().cumsum(axis=1, dtype="float32")[:, -1, :]).to(x.device).sum(dim=1)
    return {
        "reference in float32": reference(row_lengths, cols, vals, x, M, N, L),
        "one running float32 sum per row": running,
        "32 strided lanes per row, then a tree": strided,
    }


def low_precision(row_lengths, cols, vals, x, M, N, L):
    """What the tolerance must reject where a test says so."""
    return {
        "values and x in FP16": reference(row_lengths, cols, fp16(vals), fp16(x), M, N, L),
        "values and x in BF16": reference(row_lengths, cols, bf16(vals), bf16(x), M, N, L),
    }
