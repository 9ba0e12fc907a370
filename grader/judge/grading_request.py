"""One grading request, the same whichever way a submission comes in: `grader test` and `grader submit`, the warm
worker, `grader grade-many`, the Celery workers and the web judge's queue all make a GradingRequest and hand it
to grader/judge/job_request.py (or, on the queues, to grader/scale/jobs.py, which grades it the same way).

A request is validated once, when it is made (`GradingRequest(...)` or `from_dict`, for one that travelled as
JSON): its problem is a known problem's slug (never a folder, whose reference.py the grader would import), its
track a registered one (grader/tracks/) that the problem has tests for, its source UTF-8 text without a NUL byte
and at most 1 MiB (grader/judge/intake.py), its mode `test` or `submit`, its time limit a positive number of
seconds up to an hour. Anything else is a RequestError (a SourceError for the source) whose str() says which
field and why. Made, it is frozen, and pickled as it is (the grade-many pools get it without checking it again).

Light to import: `grader test` and `submit` make one before they know whether PyTorch will be needed here.
"""

from __future__ import annotations

import functools
import hashlib
import math
import uuid
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grader import tracks
from grader.judge.intake import RequestError as RequestError
from grader.judge.intake import SourceError, validate_source

if TYPE_CHECKING:
    from grader.problems.spec import Problem

MODES = ("test", "submit")
MAX_TIME_LIMIT_S = 3600.0  # a time limit past an hour is a mistake, and would hold a GPU for it
MAX_NAME_CHARS = 255  # a file name, a user name or an id: as long as a file name may be


def new_id() -> str:
    """A fresh request id, in the same form as a verdict's submission_id (12 hex digits)."""
    return id_from_hex(uuid.uuid4().hex)


def id_from_hex(digest: str) -> str:
    """12 hex digits with at least one letter: `grader show-submission` reads an all-digit key as a row id."""
    short = digest[:12]
    return "f" + short[1:] if short.isdigit() else short


@dataclass(frozen=True)
class GradingRequest:
    problem: str  # a slug under grader.problems.catalog.problems_root(), never a path
    track: str  # a registered track's name (grader/tracks/) that the problem has tests for
    filename: str  # the submission's own file name (compile diagnostics name it)
    source: str  # the submission's text
    user: str = ""
    mode: str = "submit"  # "test" checks correctness, "submit" also times the benchmarks
    time_limit_s: float | None = None  # the tests' time limit; None: the problem's own
    id: str = field(default_factory=new_id)  # the verdict's submission_id

    def __post_init__(self) -> None:
        for name in ("filename", "user", "id"):
            _check_text(name, getattr(self, name))
        if not self.filename or "/" in self.filename:
            raise RequestError(f"filename {self.filename[:200]!r}: a file's own name, without a folder")
        if not self.id:
            raise RequestError("id: empty")
        if self.track not in tracks.names():
            raise RequestError(f"unknown track {str(self.track)[:200]!r} (tracks: {', '.join(tracks.names())})")
        problem = self.spec()
        if not problem.tests_for(self.track):
            graded = sorted({d for t in problem.tests for d in t.tracks})
            raise RequestError(
                f"problem {self.problem!r} has no tests for the {self.track} track (its tests are for the "
                f"{' and '.join(graded)} device)"
            )
        if self.mode not in MODES:
            raise RequestError(f"unknown mode {str(self.mode)[:200]!r} (modes: {', '.join(MODES)})")
        _check_time_limit(self.time_limit_s)
        if not isinstance(self.source, str):
            raise SourceError(f"{self.filename}: the source must be text")
        try:
            data = self.source.encode("utf-8")
        except UnicodeEncodeError as error:  # a lone surrogate: bytes that were not UTF-8, smuggled in a str
            raise SourceError(f"{self.filename}: not UTF-8 text (character {error.start}); save it as UTF-8")
        validate_source(data, self.filename)

    def spec(self) -> Problem:
        """The problem this request names, loaded (once per version of its files); a RequestError for a name
        that is not a known problem's slug, or a problem whose files are broken."""
        from grader.problems.catalog import SLUG, list_slugs, problems_root
        from grader.problems.spec import SpecError

        if not isinstance(self.problem, str) or not SLUG.fullmatch(self.problem) or self.problem not in list_slugs():
            known = ", ".join(list_slugs()) or "none"
            raise RequestError(
                f"unknown problem {str(self.problem)[:200]!r}: a problem is named by its slug (known: {known})"
            )
        folder = problems_root() / self.problem
        try:
            return _load(folder, _version(folder))
        except SpecError as error:
            raise RequestError(str(error)) from error

    @property
    def source_bytes(self) -> bytes:
        return self.source.encode("utf-8")

    @property
    def source_sha256(self) -> str:
        return hashlib.sha256(self.source_bytes).hexdigest()

    def grading_key(self, device_name: str = "") -> tuple:
        """Requests with equal keys get the same verdict (but for user and id): grade one of them only."""
        return (self.source_sha256, self.problem, self.track, self.mode, self.time_limit_s, device_name)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> GradingRequest:
        """The request a JSON object describes (a queue's payload, a warm worker's message); keys that are no
        field are ignored, a missing field is a RequestError."""
        if not isinstance(data, dict):
            raise RequestError("a grading request is a JSON object")
        known = {f.name for f in fields(cls)}
        missing = [name for name in ("problem", "track", "filename", "source") if name not in data]
        if missing:
            raise RequestError(f"a grading request needs {', '.join(missing)}")
        return cls(**{k: v for k, v in data.items() if k in known})


def _check_text(name: str, value: object) -> None:
    if not isinstance(value, str):
        raise RequestError(f"{name}: must be text, not {type(value).__name__}")
    if len(value) > MAX_NAME_CHARS or "\0" in value:
        raise RequestError(f"{name} {value[:60]!r}...: at most {MAX_NAME_CHARS} characters, no NUL")


def _check_time_limit(limit: object) -> None:
    if limit is None:
        return
    if isinstance(limit, bool) or not isinstance(limit, int | float) or not math.isfinite(limit):
        raise RequestError(f"time limit {str(limit)[:60]!r}: a number of seconds")
    if not 0 < limit <= MAX_TIME_LIMIT_S:
        raise RequestError(f"time limit {limit:g} s: more than 0 and at most {MAX_TIME_LIMIT_S:g} s")


def _version(folder: Path) -> tuple:
    """What changes when the problem's files do: their modification times and sizes."""
    stamps: list[tuple[int, int] | None] = []
    for name in ("problem.yaml", "reference.py", "statement.md"):
        try:
            info = (folder / name).stat()
            stamps.append((info.st_mtime_ns, info.st_size))
        except OSError:
            stamps.append(None)
    return tuple(stamps)


@functools.lru_cache(maxsize=64)
def _load(folder: Path, _version: tuple) -> Problem:
    from grader.problems.catalog import load_problem

    return load_problem(folder)
