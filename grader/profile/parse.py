"""Reading `ncu --import REPORT --csv --page raw --print-units base`: one Launch per profiled kernel launch.

The CSV is a header row (ID, Process ID, Process Name, Host Name, Kernel Name, Context, Stream, Block Size,
Grid Size, Device, CC, then one column per metric), a row of units under it, then one row per launch. Numbers may
carry thousands separators; every value is converted to base units here (seconds, bytes, per second), whatever
prefix ncu chose, so the summary never depends on ncu's formatting. Anything ncu printed before the header
(==PROF== lines) is skipped. The harness's own kernels (harness/platform.h: filling inputs, poisoning outputs,
flushing L2) are recognised by name and kept apart from the submission's.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field

HARNESS_KERNELS = ("fill_kernel", "uniform_kernel", "poison_kernel", "read_flush_kernel")  # harness/platform.h
_HARNESS = re.compile(r"(?:^|::)(?:" + "|".join(HARNESS_KERNELS) + r")\s*(?:\(|<|$)")
_QUALIFIED = re.compile(r"^kj::(?:\(anonymous namespace\)::)?(?:" + "|".join(HARNESS_KERNELS) + r")\b")
_INFO_COLUMNS = ("ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "m": 1e-3, "u": 1e-6, "n": 1e-9, "p": 1e-12}
_BASE_WORDS = ("byte", "second", "cycle", "hz", "inst", "sector", "request", "warp", "thread", "block")
_SHORT_SECONDS = ("s", "ms", "us", "ns", "ps")


class ReportError(ValueError):
    """The CSV is not what `ncu --page raw --csv` writes."""


@dataclass
class Launch:
    """One profiled kernel launch: its name and launch shape, and its metrics in base units."""

    id: int
    name: str
    block: str = ""
    grid: str = ""
    metrics: dict[str, float] = field(default_factory=dict)
    text: dict[str, str] = field(default_factory=dict)  # columns whose values are not numbers

    def get(self, *names: str) -> float | None:
        """The first of `names` ncu reported."""
        return next((self.metrics[n] for n in names if n in self.metrics), None)

    @property
    def from_harness(self) -> bool:
        """Named as a harness kernel in the harness's namespace (kj::); see `submissions` for unqualified names."""
        return bool(_QUALIFIED.search(self.name))


def is_harness_kernel(name: str) -> bool:
    """A harness kernel's name, qualified or not (a submission may name its own kernel fill_kernel)."""
    return bool(_HARNESS.search(name))


def submissions(launched: list[Launch]) -> list[Launch]:
    """The submission's launches: all but the harness's, which are those in its namespace (kj::) and, where ncu
    printed names without it, those named like the harness's before the submission's first launch (the harness
    fills and poisons every buffer, then calls solve; a check-mode call launches nothing of its own after it)."""
    ours, started = [], False
    for launch in launched:
        if launch.from_harness or (not started and is_harness_kernel(launch.name)):
            continue
        started = True
        ours.append(launch)
    return ours


def scale(unit: str) -> float:
    """The factor that turns a value in `unit` into base units: 'Gbyte/second' -> 1e9, 'nsecond' -> 1e-9, '%' -> 1."""
    unit = unit.strip()
    if not unit or unit == "%":
        return 1.0
    numerator, _, denominator = unit.partition("/")
    return _word_scale(numerator) / (_word_scale(denominator) if denominator else 1.0)


def _word_scale(word: str) -> float:
    word = word.strip()
    if word in _SHORT_SECONDS:  # what `--print-units base` writes on ncu 2025.3: ns, byte/s
        return _PREFIX[word[:-1]]
    for base in _BASE_WORDS:
        if word.lower().endswith(base):
            prefix = word[: len(word) - len(base)]
            return _PREFIX.get(prefix, 1.0)
    return 1.0


def number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        return float(text)
    except ValueError:
        return None


def launches(raw_csv: str) -> list[Launch]:
    """Every launch in the CSV, in profiling order (ReportError if there is no header)."""
    lines = raw_csv.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ReportError('no CSV header (a line starting with "ID") in ncu\'s output')
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], rows[1:]
    units = body.pop(0) if body and not body[0][0].strip() else [""] * len(header)
    found: list[Launch] = []
    for row in body:
        if len(row) != len(header):
            continue
        values = dict(zip(header, row))
        launch = Launch(
            id=int(number(values.get("ID", "")) or len(found)),
            name=values.get("Kernel Name", "").strip(),
            block=values.get("Block Size", "").strip(),
            grid=values.get("Grid Size", "").strip(),
        )
        for column, unit, value in zip(header, units, row):
            if column in _INFO_COLUMNS or column in ("Block Size", "Grid Size"):
                continue
            parsed = number(value)
            if parsed is None:
                launch.text[column] = value
            else:
                launch.metrics[column] = parsed * scale(unit)
        found.append(launch)
    return found
