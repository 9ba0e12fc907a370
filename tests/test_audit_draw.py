"""The audits' draw of both supervisors (grader/run/supervision.h, Audits and one_more_sample), run many times in a
small program built here against the header itself: every sample of a benchmark is audited with the same
probability whatever its position (the last one no more than the others), exactly min(A, N) are, and the random
tail after the stop rule ends at once half the time, so the last call is at no position a program can count to.
The figures docs/security.md gives for the chance that a wrong call escapes are checked here against the draw.
Needs g++.
"""

from __future__ import annotations

import math
import shutil
import subprocess
from pathlib import Path

import pytest

from grader.run import binaries

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")

TRIALS = 20000

DRAW = r"""
#include "supervision.h"
int main(int argc, char** argv) {
    const int samples = std::atoi(argv[1]), size = std::atoi(argv[2]), trials = std::atoi(argv[3]);
    const int wrong_from = std::atoi(argv[4]);  // samples wrong_from.. are wrong: how often is none audited?
    std::vector<long> audited(samples, 0), tails(kjs::MAX_TAIL + 1, 0);
    long sizes_ok = 0, escaped = 0;
    for (int t = 0; t < trials; ++t) {
        kjs::Audits audits(size);
        for (int k = 0; k < samples; ++k) audits.offer(k);
        bool caught = false;
        for (uint64_t k : audits.kept()) ++audited[k], caught |= (int)k >= wrong_from;
        escaped += !caught;
        sizes_ok += (int)audits.kept().size() == std::min(size, samples);
        int tail = 0;
        while (kjs::one_more_sample(&tail)) {}
        ++tails[tail];
    }
    std::printf("%ld %ld\n", sizes_ok, escaped);
    for (long a : audited) std::printf("%ld ", a);
    std::printf("\n");
    for (long n : tails) std::printf("%ld ", n);
    std::printf("\n");
}
"""


@pytest.fixture(scope="module")
def draw(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("draw")
    (folder / "draw.cpp").write_text(DRAW)
    subprocess.run(
        ["g++", "-O2", "-std=c++17", "-I", str(binaries.RUN_SOURCES), "-I", str(binaries.BOUNDARY_SOURCES),
         "-o", str(folder / "draw"), str(folder / "draw.cpp")],
        check=True,
    )  # fmt: skip
    return folder / "draw"


def _run(draw: Path, samples: int, size: int, wrong_from: int = 0) -> tuple[int, int, list[int], list[int]]:
    """(trials with min(size, samples) audits, trials in which no wrong sample was audited, audits by sample
    position, tails by length)."""
    out = subprocess.run([str(draw), str(samples), str(size), str(TRIALS), str(wrong_from)], capture_output=True,
                         text=True, check=True).stdout.splitlines()  # fmt: skip
    sizes_ok, escaped = map(int, out[0].split())
    return sizes_ok, escaped, list(map(int, out[1].split())), list(map(int, out[2].split()))


@pytest.mark.parametrize("samples, size", [(30, 4), (5, 4), (3, 4), (300, 3), (31, 4)])
def test_every_sample_is_audited_with_the_same_probability(draw, samples, size):
    sizes_ok, _, audited, _ = _run(draw, samples, size)
    assert sizes_ok == TRIALS
    p = min(size, samples) / samples
    sigma = math.sqrt(TRIALS * p * (1 - p)) or 1.0
    worst = max(abs(a - TRIALS * p) / sigma for a in audited)
    assert worst < 5, f"a position audited {worst:.1f} standard deviations off {p:.3f}: {audited}"


def test_the_tail_after_the_stop_rule_is_no_fixed_length(draw):
    _, _, _, tails = _run(draw, 5, 4)
    assert abs(tails[0] / TRIALS - 0.5) < 0.02 and abs(tails[1] / TRIALS - 0.25) < 0.02
    assert sum(tails) == TRIALS


@pytest.mark.parametrize(
    "samples, size, wrong",
    [(5, 3, 3), (6, 3, 3), (10, 3, 5), (30, 3, 15), (300, 3, 150), (31, 4, 16)],
)
def test_a_cheat_wrong_on_most_samples_escapes_as_often_as_the_docs_say(draw, samples, size, wrong):
    """The chance that none of `wrong` wrong samples of `samples` is among `size` audited: C(N-K, A) / C(N, A)."""
    _, escaped, _, _ = _run(draw, samples, size, wrong_from=samples - wrong)
    expected = math.comb(samples - wrong, size) / math.comb(samples, size)
    sigma = math.sqrt(TRIALS * expected * (1 - expected)) or 1.0
    assert abs(escaped - TRIALS * expected) < 5 * sigma, (escaped / TRIALS, expected)
