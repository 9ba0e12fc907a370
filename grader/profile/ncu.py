"""Nsight Compute itself: where `ncu` is, the command lines kerneljudge runs it with, and what its failures mean.

The options are chosen so that the profile describes the call the judge timed: `--set full` (every section,
so the summary has occupancy, memory tables and warp states), `--cache-control all` (caches flushed before
each replay pass, as the harness flushes L2 before a timed call) and `--clock-control none` (the GPU's own
clocks, as when it is graded; ncu's default locks them to base, which makes kernels look up to ~1.3x slower).
Profiling replays each kernel many times; the durations it reports are the kernel's, not the call's.

`diagnose` turns what ncu printed into one sentence that says why nothing was profiled (permission, an
unsupported GPU or driver, the sandbox, the program itself), so `grader profile` can say it and exit non-zero.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

SETTINGS = ["--set", "full", "--cache-control", "all", "--clock-control", "none"]
SEARCHED = "PATH, /opt/nvidia/nsight-compute/*/ncu, /usr/local/cuda/bin/ncu"
PERMISSION_URL = "https://developer.nvidia.com/ERR_NVGPUCTRPERM"


class ProfileError(Exception):
    """Nothing could be profiled; the message says why, in a sentence a user can act on."""


def binary() -> str | None:
    """The ncu to run: the one on PATH, else the newest under /opt/nvidia, else CUDA's own; None if none."""
    found = shutil.which("ncu")
    if found:
        return found
    candidates = sorted(Path("/opt/nvidia").glob("nsight-compute/*/ncu"), reverse=True)
    candidates.append(Path("/usr/local/cuda/bin/ncu"))
    return next((str(c) for c in candidates if c.exists()), None)


def require() -> str:
    ncu = binary()
    if ncu is None:
        raise ProfileError(
            f"Nsight Compute (ncu) was not found (looked in {SEARCHED}): install it, or put it on PATH, "
            "to profile a submission"
        )
    return ncu


def version(ncu: str) -> str:
    """`ncu --version`'s last line, e.g. 'Version 2025.3.1.0 (build ...)' ('' if it does not answer)."""
    try:
        out = subprocess.run([ncu, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def record_argv(ncu: str, report: str, program: list[str]) -> list[str]:
    """Profile every kernel `program` (and its children) launches into the report file `report`."""
    return [ncu, "--target-processes", "all", *SETTINGS, "--export", report, "--force-overwrite", *program]


def import_argv(ncu: str, report: str) -> list[str]:
    """Every metric of every profiled kernel as CSV (one row a launch; a units row under the header), base units."""
    return [ncu, "--import", report, "--csv", "--page", "raw", "--print-units", "base"]


# (pattern in ncu's output, why nothing was profiled); the first that matches explains the failure
_FAILURES: list[tuple[str, str]] = [
    (
        r"ERR_NVGPUCTRPERM",
        "the GPU driver refuses access to its performance counters to this user (ERR_NVGPUCTRPERM): profile "
        "as root, or load the driver with NVreg_RestrictProfilingToAdminUsers=0 (see " + PERMISSION_URL + ")",
    ),
    (
        r"LibraryNotLoaded|Failed to initialize the profiler",
        "ncu could not start its profiler on this machine (the GPU runtime does not expose the counters, as "
        "under gVisor): profile on a machine whose driver allows profiling",
    ),
    (
        r"not supported on this device|Device not supported|Unsupported GPU",
        "ncu does not support this GPU or driver",
    ),
    (
        r"Failed to connect|Failed to bind|Cannot assign requested address|connection (?:refused|failed)",
        "ncu could not talk to the profiled process: it connects over 127.0.0.1, and the sandbox's network "
        "namespace has no loopback up (the sandbox must bring `lo` up inside the run's namespace)",
    ),
    (
        r"Permission denied|Operation not permitted",
        "ncu was refused an operation it needs in the sandbox (a file or system call): see the output below",
    ),
]


def diagnose(output: str, returncode: int) -> str:
    """Why a profiling run produced no kernels: the first known failure in ncu's output, else a generic reason."""
    for pattern, reason in _FAILURES:
        if re.search(pattern, output, re.IGNORECASE):
            return reason
    if re.search(r"No kernels were profiled", output):
        return "ncu profiled no kernel: the program launched none, or ncu could not inject itself into it"
    if returncode != 0:
        return f"the profiled program failed (exit status {returncode})"
    return "ncu wrote no report"


def error_lines(output: str, limit: int = 12) -> str:
    """ncu's own ==ERROR== and ==WARNING== lines (and the harness's), at most `limit`, to quote with a failure."""
    lines = [
        line.strip()
        for line in output.splitlines()
        if line.startswith(("==ERROR==", "==WARNING==", "==PROF==", "kerneljudge harness:"))
    ]
    return "\n".join(lines[-limit:])
