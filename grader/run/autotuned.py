"""The autotuner's choices as the submission reported them: the file the Python worker writes into the run's folder
at EXIT (harness/autotuned.py), read by the grader after the run, on a track whose framework reports autotuning.

The file is the submission's: it can write anything there, or make it a link, a FIFO or a huge file. So it is
opened without following a link or blocking and must be a regular file of at most MAX_BYTES, strict UTF-8 JSON
without NaN or Infinity, no control character or lone surrogate in any string, and of the shape below (unknown
fields refused, every list, mapping and string bounded). Anything else is no report, never an error: the report
is shown beside the verdict and never used for it or for the score.
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter

from harness.autotuned import FILE_NAME, MAX_BYTES, MAX_CHARS, MAX_ENTRIES, MAX_ITEMS, UNPRINTABLE


def _printable(text: str) -> str:
    if any(unicodedata.category(c) in UNPRINTABLE for c in text):
        raise ValueError("a control character or a lone surrogate")
    return text


Text = Annotated[str, Field(max_length=MAX_CHARS), AfterValidator(_printable)]
Int = Annotated[int, Field(ge=-(1 << 63), lt=1 << 63)]
Scalar = Int | Annotated[float, Field(allow_inf_nan=False)] | bool | Text | None


class _Report(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class AutotunedConfig(_Report):
    """The triton.Config an autotuner chose."""

    kwargs: Annotated[dict[Text, Scalar], Field(max_length=MAX_ITEMS)]
    num_warps: Int
    num_stages: Int
    num_ctas: Int | None = None  # in the Triton releases that have them
    maxnreg: Int | None = None


class AutotunedEntry(_Report):
    """One key an autotuned kernel was tuned for in the run, and the config it chose."""

    kernel: Text  # the @triton.jit function's name
    key: Annotated[dict[Text, Text], Field(max_length=MAX_ITEMS)]  # each `key` argument's value, as its repr
    extra: Annotated[list[Scalar], Field(max_length=MAX_ITEMS)]  # what Triton appended to the key: dtypes
    config: AutotunedConfig


ENTRIES: TypeAdapter[list[AutotunedEntry]] = TypeAdapter(Annotated[list[AutotunedEntry], Field(max_length=MAX_ENTRIES)])


def read(run_folder: Path) -> list[AutotunedEntry]:
    """The report in `run_folder`; [] where there is none or it is not one."""
    try:
        data = _read_bytes(run_folder / FILE_NAME)
        if data is None:
            return []
        parsed = json.loads(data.decode("utf-8"), parse_constant=_refuse_constant)
        return ENTRIES.validate_python(parsed, strict=True)
    except (OSError, ValueError, RecursionError):  # a pydantic ValidationError and a UnicodeDecodeError are ValueErrors
        return []


def _read_bytes(path: Path) -> bytes | None:
    """The file's bytes if it is a regular file (not a link, not a FIFO) of at most MAX_BYTES, else None."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], MAX_BYTES + 1
        while left > 0:
            chunk = os.read(fd, left)
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        return data if len(data) <= MAX_BYTES else None
    finally:
        os.close(fd)


def _refuse_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON")
