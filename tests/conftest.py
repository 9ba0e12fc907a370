"""Shared pytest setup: GPU tests are skipped where no GPU is visible; `--shard K/N` runs one part of a selection;
fixture files state their verdict; a small softmax problem for the tests that grade many jobs; a small disk that can
be filled or made read-only."""

from __future__ import annotations

import errno
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from grader import tracks
from grader.toolchain import detect

# A suite started in the background by a shell without job control (`(make test &)`, nohup from a script) inherits
# SIGINT ignored, and so would every grader the tests start: the tests that stop a grader with SIGINT, as Ctrl-C
# does, would wait for it in vain. With a handler here, the children start with SIGINT at its default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

REPO = Path(__file__).resolve().parents[1]
MINI_PROBLEM = "softmax-mini"


def pytest_addoption(parser):
    parser.addoption(
        "--shard",
        metavar="K/N",
        help="run part K (counted from 0) of N of the selected tests: every N-th in collection order, from the K-th; "
        "tests marked every_shard (a suite's checks before and after its gradings) run in every part",
    )


@pytest.hookimpl(trylast=True)  # after -m and -k deselect: the parts split what is selected
def pytest_collection_modifyitems(config, items):
    if config.getoption("shard"):
        _keep_shard(config, items)
    if detect().gpu and detect().nvcc:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible (nvidia-smi found none): GPU tests run under `make test-gpu`")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


def _keep_shard(config, items) -> None:
    """Keeps part K of N of `items` (--shard K/N) in place, in order, and reports the rest as deselected."""
    shard = config.getoption("shard")
    found = re.fullmatch(r"(\d+)/(\d+)", shard)
    if not found or not int(found.group(1)) < int(found.group(2)):
        raise pytest.UsageError(f"--shard takes K/N with 0 <= K < N, not {shard!r}")
    part, parts = int(found.group(1)), int(found.group(2))
    kept, dropped, counted = [], [], 0
    for item in items:
        if item.get_closest_marker("every_shard"):
            kept.append(item)
            continue
        (kept if counted % parts == part else dropped).append(item)
        counted += 1
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept


@dataclass(frozen=True)
class Fixture:
    """A source file whose header comments state what grading it must give:
    // expect: <status>   // problem: <slug>   // mode: test|submit   // message: <text the message must contain>
    // time_limit: <seconds, for fixtures that must time out>
    (a Python fixture, for the triton or cupy track, writes them as `# expect: ...`)
    """

    path: Path
    expect: str
    problem: str
    mode: str
    message: str
    time_limit_s: float | None

    @property
    def track(self) -> str:
        """The track the file says (its extension; for a .py file, the framework it imports)."""
        return tracks.of_file(self.path) or "cpu"


def read_fixture(path: Path) -> Fixture:
    header = {}
    for line in path.read_text().splitlines()[:12]:
        found = re.match(r"\s*(?://|#)\s*(expect|problem|mode|message|time_limit):\s*(.+?)\s*$", line)
        if found:
            header[found.group(1)] = found.group(2)
    problem = header.get("problem") or path.parent.name
    return Fixture(
        path,
        header["expect"],
        problem,
        header.get("mode", "test"),
        header.get("message", ""),
        float(header["time_limit"]) if "time_limit" in header else None,
    )


def fixture_params(folder: Path) -> list:
    """pytest params for every .cpp/.cu/.py fixture below `folder` (not the test modules); those for the GPU
    (.cu, and the triton and cupy tracks' .py files) are marked gpu."""
    params = []
    for path in sorted(folder.rglob("*")):
        if path.suffix not in (".cpp", ".cu", ".py") or path.name.startswith(("test_", "conftest")):
            continue
        fixture = read_fixture(path)
        marks = [pytest.mark.gpu] if tracks.get(fixture.track).device.gpu else []
        params.append(pytest.param(fixture, id=str(path.relative_to(folder)), marks=marks))
    return params


def write_mini_problem(root: Path) -> None:
    """root/softmax-mini: the real softmax's checks on three small tests and one small CPU benchmark, so a
    grading takes a fraction of a second (the CPU sources of softmax grade on it unchanged)."""
    spec = yaml.safe_load((REPO / "problems" / "softmax" / "problem.yaml").read_text())
    spec["tests"] = [
        {"name": "tiny_odd", "sizes": {"M": 3, "N": 5}},
        {"name": "primes", "sizes": {"M": 37, "N": 1013}},
        {"name": "large_logits", "sizes": {"M": 7, "N": 999}, "inputs": {"input": {"low": -1e4, "high": 1e4}}},
    ]
    spec["benchmarks"] = {"cpu": [{"name": "small", "sizes": {"M": 64, "N": 1024}}]}
    spec["time_limit_s"] = 20
    folder = root / MINI_PROBLEM
    folder.mkdir(parents=True)
    (folder / "problem.yaml").write_text(yaml.safe_dump(spec))
    for name in ("reference.py", "statement.md"):
        shutil.copy(REPO / "problems" / "softmax" / name, folder / name)


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """This test's own cache and runs folders (a run's builds and workdirs land there, not in the user's)."""
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELJUDGE_RUNS", str(tmp_path / "runs"))
    return tmp_path


@pytest.fixture
def mini_problem(tmp_path, monkeypatch) -> Path:
    """softmax-mini in a problems root of its own, with a private build cache and data folder (returns tmp_path)."""
    write_mini_problem(tmp_path / "problems")
    monkeypatch.setenv("KERNELJUDGE_PROBLEMS", str(tmp_path / "problems"))
    monkeypatch.setenv("KERNELJUDGE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("KERNELJUDGE_DB", raising=False)
    return tmp_path


class SmallDisk:
    """A 2 MiB tmpfs: a real disk that can be filled (ENOSPC) or remounted read-only (EROFS), even for root."""

    def __init__(self, path: Path):
        self.path = path

    def fill(self) -> None:
        fd = os.open(self.path / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError as error:
            assert error.errno == errno.ENOSPC, error
        finally:
            os.close(fd)

    def empty(self) -> None:
        (self.path / "filler").unlink(missing_ok=True)

    def read_only(self) -> None:
        subprocess.run(["mount", "-o", "remount,ro", str(self.path)], check=True)


@pytest.fixture
def small_disk(tmp_path) -> Iterator[SmallDisk]:
    """A SmallDisk under tmp_path; skips where it cannot be mounted (mounting needs root)."""
    path = tmp_path / "disk"
    path.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(path)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode(errors='replace').strip()}")
    try:
        yield SmallDisk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)
