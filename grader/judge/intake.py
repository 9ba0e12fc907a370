"""A submission's source checked at intake: UTF-8 text, no NUL byte, at most MAX_SOURCE_BYTES; anything else is a
SourceError that names the file and says why, so what is graded, what is stored and its sha256 are the same bytes,
on SQLite and PostgreSQL alike. Light to import: `grader test` and `submit` read their file with it before they
know whether PyTorch will be needed in their own process (a warm worker may grade it).
"""

from __future__ import annotations

import os

MAX_SOURCE_BYTES = 1 << 20  # 1 MiB: far above any kernel, far below what would hurt the database


class RequestError(ValueError):
    """A grading request refused at intake (grader/judge/grading_request.py); str() names the field and says why."""


class SourceError(RequestError):
    """A source refused at intake; str() names the file and says why."""


def validate_source(data: bytes, name: str) -> str:
    """The text of a submission's bytes, or a SourceError: not UTF-8, a NUL byte, or over MAX_SOURCE_BYTES."""
    if len(data) > MAX_SOURCE_BYTES:
        raise SourceError(f"{name}: {too_big(len(data))}")
    nul = data.find(b"\0")
    if nul >= 0:
        line = data.count(b"\n", 0, nul) + 1
        raise SourceError(f"{name}: a NUL byte at line {line} (byte {nul}): a source must be text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise SourceError(
            f"{name}: not UTF-8 text (byte 0x{data[error.start]:02x} at line {line}, byte {error.start}); "
            "save it as UTF-8"
        )


def read_source(path: str | os.PathLike) -> str:
    """A submission file's text, checked as validate_source says (OSError when it cannot be read)."""
    with open(path, "rb") as f:
        data = f.read(MAX_SOURCE_BYTES + 1)  # never more: a 50 GB file is refused, not read
        if len(data) > MAX_SOURCE_BYTES:
            raise SourceError(f"{os.fspath(path)}: {too_big(os.fstat(f.fileno()).st_size)}")
    return validate_source(data, os.fspath(path))


def too_big(size: int) -> str:
    return f"{size:,} bytes; a source may be at most {MAX_SOURCE_BYTES:,} bytes (1 MiB)"
