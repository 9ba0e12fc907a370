"""The autotuner's choices, as the submission's own report: for each `@triton.autotune` kernel among the globals
of the submission's module (also one under `@triton.heuristics`), each key it tuned in this run and the
configuration it chose, as JSON. The Python worker opens FILE_NAME in the run's folder before the sandbox's
layers are installed and writes the report there at EXIT; the grader reads it back as untrusted input
(grader/run/autotuned.py) and only shows it.

Triton is not imported: its objects are known by their classes' names and modules (`triton.*`), which holds for
Triton 3.2 and later. Everything read belongs to the submission, so the report is bounded (MAX_ENTRIES entries,
MAX_BYTES in all, every string cut to MAX_CHARS characters, control characters replaced) and `report` never
raises: anything odd gives the empty report `[]`.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import unicodedata
from collections.abc import Iterator
from typing import Any, TypeGuard

FILE_NAME = "autotuned.json"  # in the run's folder, the worker's working folder (grader/run/autotuned.py reads it)
FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
MAX_ENTRIES = 64
MAX_BYTES = 64 << 10
MAX_CHARS = 200
MAX_ITEMS = 64  # of a key's named values, of what Triton appended to it, of a config's kwargs
MAX_LINKS = 8  # `.fn` links followed from a global (an Autotuner wraps a Heuristics wraps a JITFunction ...)
INT_LIMIT = 1 << 63  # an int outside the signed 64-bit range is shown as text
UNPRINTABLE = ("Cc", "Cs")  # Unicode categories no report string holds: control characters, lone surrogates


def open_file() -> int | None:
    """FILE_NAME in the working folder, opened for writing now: once the sandbox's layers are on, an open may be
    refused. None where it cannot be opened (no report then)."""
    try:
        return os.open(FILE_NAME, FLAGS, 0o644)
    except OSError:
        return None


def write(fd: int, module: object) -> None:
    """The report of `module` into `fd` (from open_file), all of it, then `fd` closed; an error of the file (the
    run's folder full) leaves what was written."""
    data = memoryview(report(module))
    try:
        while data:
            written = os.write(fd, data)
            if written <= 0:
                break
            data = data[written:]
    except OSError:
        pass
    finally:
        try:
            os.close(fd)
        except OSError:
            pass


def report(module: object) -> bytes:
    """The JSON list of {"kernel", "key", "extra", "config"}: one entry per key each autotuner of `module` chose a
    config for, at most MAX_ENTRIES and MAX_BYTES; `[]` for anything odd."""
    try:
        entries = itertools.islice((e for tuner in _autotuners(module) for e in _entries(tuner)), MAX_ENTRIES)
        parts: list[str] = []
        size = 2  # the brackets
        for entry in entries:
            text = json.dumps(entry, ensure_ascii=False, allow_nan=False)
            size += len(text.encode()) + (1 if parts else 0)
            if size > MAX_BYTES:
                break
            parts.append(text)
        return ("[" + ",".join(parts) + "]").encode()
    except BaseException:  # the submission's objects may raise anything from any attribute
        return b"[]"


def _triton_classes(value: object) -> set[str]:
    """The names of the classes from Triton's modules among those of `value`'s type (a subclass counts)."""
    return {c.__name__ for c in type(value).__mro__ if str(c.__module__).startswith("triton.")}


def _links(value: object) -> Iterator[Any]:
    """`value` and what it wraps (`.fn`), as long as each is a Triton object."""
    for _ in range(MAX_LINKS):
        if not _triton_classes(value):
            return
        yield value
        value = getattr(value, "fn", None)


def _autotuners(module: object) -> Iterator[Any]:
    """Each Autotuner a global of `module` is or wraps, once."""
    seen: set[int] = set()
    for value in list(vars(module).values()):
        for linked in _links(value):
            if "Autotuner" in _triton_classes(linked) and id(linked) not in seen:
                seen.add(id(linked))
                yield linked


def _entries(tuner: Any) -> Iterator[dict]:
    """One entry per key in the autotuner's cache. Triton's key is the values of the `key` arguments the call
    passed, in the order `key` names them, then the dtype of every argument that has one."""
    wrapped = list(_links(tuner))[-1].fn  # the Python function under @triton.jit
    kernel = _text(str(getattr(wrapped, "__name__", "")))
    arguments = list(tuner.arg_names)
    names = [name for name in tuner.keys if name in arguments]
    for key, config in list(tuner.cache.items()):
        chosen = _config(config)
        if not isinstance(key, tuple) or chosen is None:
            continue
        yield {
            "kernel": kernel,
            "key": {_text(str(name)): _text(repr(value)) for name, value in zip(names[:MAX_ITEMS], key)},
            "extra": [_value(value) for value in key[len(names) :][:MAX_ITEMS]],
            "config": chosen,
        }


def _config(config: Any) -> dict | None:
    """A triton.Config as JSON, None where its fields are not what Triton's are."""
    kwargs = config.kwargs
    if not isinstance(kwargs, dict) or not _is_int(config.num_warps) or not _is_int(config.num_stages):
        return None
    chosen = {
        "kwargs": {_text(str(name)): _value(value) for name, value in list(kwargs.items())[:MAX_ITEMS]},
        "num_warps": config.num_warps,
        "num_stages": config.num_stages,
    }
    for name, may_be_none in (("num_ctas", False), ("maxnreg", True)):  # not in every Triton release
        if hasattr(config, name):
            value = getattr(config, name)
            if not (_is_int(value) or (may_be_none and value is None)):
                return None
            chosen[name] = value
    return chosen


def _is_int(value: object) -> TypeGuard[int]:
    """An int (not a bool) of the signed 64-bit range."""
    return isinstance(value, int) and not isinstance(value, bool) and -INT_LIMIT <= value < INT_LIMIT


def _value(value: object) -> int | float | bool | str | None:
    """A JSON scalar as it is (a string cut), anything else (a non-finite float, a tuple) as its repr, cut."""
    if value is None or isinstance(value, bool) or _is_int(value):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return _text(value if isinstance(value, str) else repr(value))


def _text(text: str) -> str:
    """At most MAX_CHARS characters, each control character or lone surrogate as U+FFFD (the reader refuses them)."""
    return "".join("\ufffd" if unicodedata.category(c) in UNPRINTABLE else c for c in text[:MAX_CHARS])
