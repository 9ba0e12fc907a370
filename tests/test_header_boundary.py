"""The C++ sources keep to their side of the trust boundary (docs/architecture.md, "Trust model"): a trusted
supervisor's file (grader/run/) never includes a header of the untrusted worker (harness/), nor the other way
round; what both compile lives in grader/boundary/ (the wire format, the input generator, the CUDA driver calls),
which includes nothing of either side. Checked on every `#include "..."` of the three folders, each resolved as
the compiler resolves it: the including file's own folder first, then the boundary's (the only other folder on
either side's include path, grader/run/binaries.py). And the programs are built that way.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.run import binaries

TRUSTED, UNTRUSTED, BOUNDARY = binaries.RUN_SOURCES, binaries.HARNESS_SOURCES, binaries.BOUNDARY_SOURCES
SOURCES = (".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def _sources(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in SOURCES)


def _resolve(source: Path, name: str) -> Path | None:
    """The file `#include "name"` in `source` compiles: its own folder's, else the boundary's; None if neither."""
    for folder in (source.parent, BOUNDARY):
        if (folder / name).is_file():
            return (folder / name).resolve()
    return None


def crossings(source: Path, text: str, side: Path) -> list[str]:
    """Each quoted include of `source` (on `side`) that is not its own side's header or the boundary's, named
    with where it leads; the boundary's own files may include only the boundary."""
    allowed = (side,) if side == BOUNDARY else (side, BOUNDARY)
    found = []
    for name in INCLUDE.findall(text):
        target = _resolve(source, name)
        if target is None:
            found.append(f"{source.name}: #include \"{name}\" is neither its side's header nor the boundary's")
        elif not any(target.is_relative_to(folder.resolve()) for folder in allowed):
            found.append(f'{source.name}: #include "{name}" reaches {target}')
    return found


@pytest.mark.parametrize("side", [TRUSTED, UNTRUSTED, BOUNDARY], ids=["grader-run", "harness", "boundary"])
def test_no_include_crosses_the_trust_boundary(side):
    sources = _sources(side)
    assert sources, f"no C++ sources in {side}"
    found = [line for source in sources for line in crossings(source, source.read_text(), side)]
    assert not found, "includes across the trust boundary:\n" + "\n".join(found)


def test_the_boundary_holds_what_both_sides_compile():
    names = {p.name for p in _sources(BOUNDARY)}
    assert {"protocol.h", "generator.h", "cuda_driver.h"} <= names
    for side in (TRUSTED, UNTRUSTED):
        assert not names & {p.name for p in _sources(side)}, f"{side} keeps a copy of a boundary header"


def test_the_check_sees_a_crossing():
    # the rule's own test: a supervisor that includes the worker's seccomp filter, a worker that includes the
    # supervisors' guards, and a path around the boundary are each reported; the boundary's protocol is not
    supervisor, worker = TRUSTED / "supervisor.cpp", UNTRUSTED / "worker.cpp"
    assert crossings(supervisor, '#include "protocol.h"\n#include "guards.h"\n', TRUSTED) == []
    assert len(crossings(supervisor, '#include "seccomp.h"\n', TRUSTED)) == 1
    assert len(crossings(supervisor, '#include "../../harness/seccomp.h"\n', TRUSTED)) == 1
    assert len(crossings(worker, '  #  include "supervision.h"\n', UNTRUSTED)) == 1
    assert len(crossings(worker, '#include "../grader/run/guards.h"\n', UNTRUSTED)) == 1
    assert len(crossings(BOUNDARY / "protocol.h", '#include "../run/guards.h"\n', BOUNDARY)) == 1


@pytest.mark.parametrize("name", sorted(binaries.PROGRAMS))
def test_each_program_is_built_with_its_side_and_the_boundary_only(name):
    program = binaries.PROGRAMS[name]
    side = program.source.parent
    assert side in (TRUSTED, UNTRUSTED)
    assert program.include_flags == ["-I", str(side), "-I", str(BOUNDARY)]
    for header in program.headers:
        assert header.parent in (side, BOUNDARY) and header.is_file(), header
    included = set(INCLUDE.findall(program.source.read_text()))
    assert included <= {h.name for h in program.headers}, f"{name} includes a header its cache key leaves out"
