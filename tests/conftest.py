"""Shared pytest setup: GPU tests are skipped where no GPU is visible; fixture files state their verdict."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from grader.build.toolchain import detect

REPO = Path(__file__).resolve().parents[1]


def pytest_collection_modifyitems(config, items):
    if detect().gpu and detect().nvcc:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible (nvidia-smi found none): GPU tests run under `make test-gpu`")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@dataclass(frozen=True)
class Fixture:
    """A source file whose header comments state what grading it must give:
    // expect: <status>   // problem: <slug>   // mode: test|submit   // message: <text the message must contain>
    // time_limit: <seconds, for fixtures that must time out>
    """

    path: Path
    expect: str
    problem: str
    mode: str
    message: str
    time_limit_s: float | None

    @property
    def track(self) -> str:
        return "cuda" if self.path.suffix == ".cu" else "cpu"


def read_fixture(path: Path) -> Fixture:
    header = {}
    for line in path.read_text().splitlines()[:12]:
        found = re.match(r"\s*//\s*(expect|problem|mode|message|time_limit):\s*(.+?)\s*$", line)
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
    """pytest params for every .cpp/.cu fixture below `folder`; .cu ones are marked gpu."""
    params = []
    for path in sorted(folder.rglob("*.c*")):
        if path.suffix not in (".cpp", ".cu"):
            continue
        fixture = read_fixture(path)
        marks = [pytest.mark.gpu] if fixture.track == "cuda" else []
        params.append(pytest.param(fixture, id=str(path.relative_to(folder)), marks=marks))
    return params
