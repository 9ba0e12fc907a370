"""The JIT cache on a GPU (grader/run/jit_cache.py): what one run of a Triton source leaves in its cache folder
comes back to the next run of the same source only, and changes nothing of its verdict. The track's rules keep a
submission from writing files itself, so the test plants a file where its run's Triton cache is, as a run that
got around them would."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import REPO

from grader.judge import pipeline
from grader.problems.catalog import load_problem
from grader.run import jit_cache
from grader.verdict.status import Status

pytestmark = [pytest.mark.gpu, pytest.mark.slow]

PLANTED = "kerneljudge-planted"


def test_a_file_a_run_leaves_in_its_jit_cache_reaches_only_its_own_sources_next_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    softmax = load_problem("softmax")
    copy_in, copy_out = jit_cache.copy_in, jit_cache.copy_out
    seen: list[set[str]] = []

    def planting_copy_out(track: str, key: str, workdir: Path) -> bool:
        (workdir / ".triton" / PLANTED).write_text("meant for the next grading")
        return copy_out(track, key, workdir)

    def watching_copy_in(track: str, key: str, workdir: Path, uid: int | None) -> int:
        copied = copy_in(track, key, workdir, uid)
        seen.append(
            {path.name for path in (workdir / ".triton").rglob("*")} if (workdir / ".triton").exists() else set()
        )
        return copied

    monkeypatch.setattr(jit_cache, "copy_in", watching_copy_in)

    def grade(name: str):
        source = (REPO / "solutions" / "softmax" / name).read_bytes()
        return pipeline.grade(softmax, source, name, track="triton", sandbox_kind="local")

    with monkeypatch.context() as planting:
        planting.setattr(jit_cache, "copy_out", planting_copy_out)
        first = grade("02_triton_online.py")
    second = grade("02_triton_online.py")
    other = grade("01_triton_three_pass.py")
    assert first.status == second.status == other.status == Status.ACCEPTED, (first.message, other.message)
    assert seen[0] == set() and PLANTED in seen[1]  # the same source's next run: its own entry, planted file too
    assert PLANTED not in seen[2]  # another source: never
    assert second.stages_s.get("run jit", 0) <= first.stages_s.get("run jit", 0)  # compiled kernels were reused


def test_what_a_submission_writes_into_its_jit_cache_reaches_no_other_source_and_no_link_is_kept(tmp_path, monkeypatch):
    """The hostile pair in tests/adversarial/softmax: the plant writes a file, a link to the root and a FIFO into
    its run's Triton cache folder itself; the reader, another source graded next with the same judge cache,
    writes its answer only if it finds the file."""
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    softmax = load_problem("softmax")

    def grade(name: str):
        source = (REPO / "tests" / "adversarial" / "softmax" / name).read_bytes()
        return pipeline.grade(softmax, source, name, track="triton", sandbox_kind="local")

    plant = grade("triton_jit_cache_plant.py")
    reader = grade("triton_jit_cache_reader.py")
    assert plant.status == Status.ACCEPTED, plant.message
    assert reader.status == Status.WRONG_ANSWER, reader.message
    kept = [path for path in (tmp_path / "cache").rglob("*") if path.name.startswith("kerneljudge-jit-")]
    assert [path.name for path in kept] == ["kerneljudge-jit-plant"]  # the file, in the plant's entry only
    assert kept[0].is_file() and not kept[0].is_symlink()
