"""Forged timers against the judge's clock, on the CUDA track: a kernel of a known length (20 us to 3 ms: a copy,
then one thread keeps the GPU busy) whose worker claims less than its events measured, by a constant (10, 50, 100,
300 us), by a factor (0.95, 0.9), only in every other call or only after the warm-up, through the GOT's
cudaEventElapsedTime or by rewriting the worker's reply on its way out; and one that writes the DONE word itself
before its work starts. Each is rejected, or scored no lower than the judge's clock of its own run less the margin
within which a claim stands in for it (1%, at least 2 us), and no lower than the same kernel's honest score in
another run less twice that margin: what the grader's rule (benchmarks.scored) makes of the records is what a
verdict would say.

Run with `pytest -s` to print the table (one "forgery |" line per case). Needs a CUDA GPU (marked gpu).
"""

from __future__ import annotations

import secrets
from functools import cache
from pathlib import Path

import pytest
from supervised_runs import GOT_PATCH, HONEST, SPIN_COPY, TIMER_PATCH, request_text, run

from grader.judge import benchmarks, supervisor_records
from grader.perf import stats
from grader.run import supervised

pytestmark = pytest.mark.gpu

LENGTHS_US = [20, 100, 300, 1000, 3000]
COUNT = 1 << 16  # the copy's elements: a few microseconds of the call
MODE = "bench 10 30 2000 3"

# The claim the patched timer makes, from what the events measured (*ms) and how many calls it has timed (calls).
CLAIMS = {
    "minus 10 us": "std::max(*ms - 0.010f, 0.0005f)",
    "minus 50 us": "std::max(*ms - 0.050f, 0.0005f)",
    "minus 100 us": "std::max(*ms - 0.100f, 0.0005f)",
    "minus 300 us": "std::max(*ms - 0.300f, 0.0005f)",
    "times 0.95": "*ms * 0.95f",
    "times 0.9": "*ms * 0.9f",
    "every other call times 0.5": "(calls % 2) ? *ms * 0.5f : *ms",
    "after the warm-up times 0.8": "calls > 30 ? *ms * 0.8f : *ms",
}

# The worker's DONE reply rewritten on its way out (send, through the GOT): its call_ms times 0.9.
REPLY_PATCH = GOT_PATCH.replace("SYMBOL", "send").replace(
    "HOOK",
    """#include <sys/socket.h>
struct Reply { unsigned magic, kind; unsigned long long call; double call_ms, tail_ms; };
static ssize_t scaled(int fd, const void* data, size_t size, int flags) {
    if (size == sizeof(Reply)) {
        Reply r;
        std::memcpy(&r, data, sizeof r);
        if (r.kind == 4) r.call_ms *= 0.9;  // DONE
        return send(fd, &r, sizeof r, flags);
    }
    return send(fd, data, size, flags);
}""",
)

# Writes the call's mark into every word of the worker's writable data that could be the DONE word's address (a
# page-aligned device address past the call's buffers), on a stream of its own, before the work: "done" at once.
EARLY_DONE = r"""
#include <cuda.h>
#include <cuda_runtime.h>
#include <link.h>
#include <cstdint>
using WriteFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
static WriteFn write_value = nullptr;
static cudaStream_t side = nullptr;
static uint64_t words[16];
static int found = 0;
static int scan(dl_phdr_info* info, size_t, void* data) {
    const uint64_t* range = static_cast<const uint64_t*>(data);  // the region's start, the first buffer
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
        const uint64_t* w = reinterpret_cast<const uint64_t*>(info->dlpi_addr + ph.p_vaddr);
        for (size_t k = 0; k < ph.p_memsz / 8 && found < 16; ++k)
            if (w[k] > range[1] && w[k] < range[0] + (1ull << 36) && (w[k] - range[0]) % 4096 == 0) words[found++] = w[k];
    }
    return 1;  // the worker's own executable only
}
#define BEFORE_LAUNCH                                                                                          {                                                                                                              const char* go = reinterpret_cast<const char*>(n) - 152; /* Go.values, grader/boundary/protocol.h */         const uint32_t mark = *reinterpret_cast<const uint32_t*>(go + 236);                                        if (!write_value) {                                                                                            uint64_t range[2] = {(uint64_t)p[0] - *reinterpret_cast<const uint64_t*>(go + 24), (uint64_t)p[0]};             dl_iterate_phdr(scan, range);                                                                              cudaDriverEntryPointQueryResult q;                                                                         cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", (void**)&write_value, 12000,                                                        cudaEnableDefault, &q);                                                   cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);                                               }                                                                                                          for (int k = 0; write_value && k < found; ++k) write_value(side, words[k], mark, 0);                    }
"""


# Every thread waits out the length by the global timer, then copies: the outputs are written only at the end, as a
# real kernel's are (with the copy first, work marked done early would find its outputs already complete).
SPIN_THEN_COPY = r"""
#include <cuda_runtime.h>
__global__ void spin_then_copy(const float* x, float* y, int n) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); while (now - start < SPIN_NS);
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
extern "C" void kerneljudge_entry(void** p, const int* n) {
    BEFORE_LAUNCH
    spin_then_copy<<<(n[0] + 255) / 256, 256>>>((const float*)p[0], (float*)p[1], n[0]);
}
"""


@cache
def _honest_ms(length_us: int, kernel: str, folder: Path) -> float:
    """The honest kernel's score (by the grader's rule) at this length, measured once per test session."""
    folder.mkdir(parents=True, exist_ok=True)
    source = HONEST + kernel.replace("SPIN_NS", f"{length_us * 1000}ull")
    result = run(folder, source, request_text(secrets.randbits(128), COUNT, MODE))
    try:
        assert result.outcome.returncode == 0, result.outcome.stderr
        summary, _judge, said = _scored(result)
        assert not said.startswith("forged"), said
        return summary["median_us"] * 1e-3
    finally:
        supervised.remove_trusted(result.trusted)


def _scored(result: supervised.Result) -> tuple[dict, float, str]:
    parsed = supervisor_records.times(result.trusted, "t")
    judged = supervisor_records.judge_times_ms(result.trusted, "t")
    assert parsed is not None and judged is not None, "no timing or clock record"
    return benchmarks.scored(stats.summarise_ms([row[1] for row in parsed[1]]), stats.summarise_ms(judged))


def _forgeries() -> list:
    cases = [(name, TIMER_PATCH.replace("FORGED", claim), SPIN_COPY) for name, claim in CLAIMS.items()]
    cases += [
        ("reply rewritten, times 0.9", REPLY_PATCH, SPIN_COPY),
        ("DONE word written before the work", EARLY_DONE, SPIN_THEN_COPY),
    ]
    return [
        pytest.param(patch, kernel, length, id=f"{name}-{length}us")
        for name, patch, kernel in cases
        for length in LENGTHS_US
    ]


@pytest.mark.parametrize("patch, kernel, length_us", _forgeries())
def test_a_forgery_is_rejected_or_gains_under_one_percent(tmp_path_factory, folders, patch, kernel, length_us, request):
    honest_ms = _honest_ms(length_us, kernel, tmp_path_factory.getbasetemp() / "honest")
    source = patch + kernel.replace("SPIN_NS", f"{length_us * 1000}ull")
    result = run(folders, source, request_text(secrets.randbits(128), COUNT, MODE))
    try:
        violation = (
            (result.trusted / "violation").read_text().strip() if (result.trusted / "violation").exists() else ""
        )
        if violation or result.outcome.returncode != 0:
            outcome = f"rejected: {violation or result.outcome.stderr[-200:]}"
            score_ms = None
        else:
            summary, judge_ms, said = _scored(result)
            score_ms = None if said.startswith("forged") else summary["median_us"] * 1e-3
            outcome = said if score_ms is None else f"accepted, {said}"
        shown = f"{score_ms * 1e3:.2f} us" if score_ms is not None else "-"
        print(f"\nforgery | {request.node.callspec.id} | {outcome} | {shown} | honest {honest_ms * 1e3:.2f} us")
        if score_ms is not None:
            # The rule: a claim stands in for the judge's clock of the same run only within the agreement margin.
            assert score_ms >= judge_ms - benchmarks.agreement_ms(judge_ms) - 1e-9, f"scored {score_ms * 1e3:.2f} us"
            # The judge's clock itself was not fooled: the honest kernel's score in another run, less the margin
            # the rule grants and as much again for the two runs' calibrations (about 1 us apart at 20 us).
            assert score_ms >= honest_ms - 2 * benchmarks.agreement_ms(honest_ms), (
                f"{request.node.callspec.id}: scored {score_ms * 1e3:.2f} us, honest {honest_ms * 1e3:.2f} us"
            )
    finally:
        supervised.remove_trusted(result.trusted)
