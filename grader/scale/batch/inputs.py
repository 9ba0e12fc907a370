"""What `grader grade-many` grades: the jobs named by a folder or a manifest, and which of them are done.

INPUT is a folder of .cu/.cpp files (the problem is each file's parent folder name, or --problem) or a
JSON-lines manifest, one `{"problem", "file", "user"}` object a line (optional "track", "mode",
"time_limit_s"; "file" is relative to the manifest's folder, and must lie in it).

The batch is untrusted input: a problem is named by its slug only (never a folder, whose reference.py the
grader would import), and a file is opened inside the batch's folder through no symbolic link and with its
owner's rights (grader/scale/batch/files.py). A file refused at intake (not UTF-8 text, a NUL byte, over the
size limit: grader/judge/intake.py), a link, a file the owner could not read or one that cannot be read is
reported and left out; the rest of the batch is graded. A malformed manifest line (an absolute path or a `..`
among them), a problem named by anything but a known slug is an InputError: the whole command stops before
grading anything.

Job ids are derived from (output file, entry, problem, track, mode, user, time limit, source), so running the
same command again finds the same ids, and a job whose verdict is in the output file or in the database is
not graded again. Without an output file the ids are keyed on standard output instead.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from grader import tracks as registry  # `tracks` is collect's argument: the names asked for
from grader.judge.grading_request import RequestError
from grader.judge.intake import SourceError
from grader.problems.catalog import SLUG
from grader.scale import jobs
from grader.scale.batch import files as batch_files
from grader.scale.jobs import Job
from grader.toolchain import detect

SUBMISSION_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".py")  # a .py file's track is told by its imports, once read
STDOUT_KEY = "<stdout>"  # the place of the results in the job ids of a batch without --out


class InputError(Exception):
    """The input cannot be graded as a whole (no such folder, a malformed manifest, an unknown problem)."""


@dataclass
class Item:
    """One job of a batch, with where it came from."""

    job: Job
    file: str


@dataclass
class Batch:
    items: list[Item]
    notes: list[str] = field(default_factory=list)  # what was left out on purpose (tracks this host cannot run)
    refused: list[str] = field(default_factory=list)  # entries left out because their file was refused


def runnable_tracks() -> list[str]:
    tools = detect()
    return [t.name for t in registry.every() if t.device.available(tools)]


def collect(
    input_path: Path,
    *,
    problem: str | None = None,
    tracks: Iterable[str] | None = None,
    mode: str = "submit",
    user: str = "anonymous",
    time_limit_s: float | None = None,
    out: Path | None = None,
) -> Batch:
    """The jobs named by a folder or a manifest, with notes on what was left out and why."""
    tracks = list(tracks or runnable_tracks())
    if problem is not None:
        _check_name(problem, "--problem")
    if input_path.is_dir():
        entries = _folder_entries(input_path, problem, mode, user, time_limit_s)
        base = input_path
    elif input_path.is_file():
        entries = _manifest_entries(input_path, problem, mode, user, time_limit_s)
        base = input_path.parent
    else:
        raise InputError(f"no such file or folder: {input_path}")
    reader = batch_files.Reader.owner_of(input_path)
    batch, left_out = Batch([]), Counter[str]()
    for entry, relative, fields in entries:
        if fields["track"] is not None and fields["track"] not in tracks:
            left_out[fields["track"]] += 1
            continue
        where = "" if input_path.is_dir() else f"{entry}: "  # a manifest's line; a folder's file names itself
        try:
            source = batch_files.read_source(base, relative, reader)
        except (SourceError, batch_files.RefusedFile) as error:
            batch.refused.append(f"{where}{error}")
            continue
        except OSError as error:
            batch.refused.append(f"{where}cannot read {base / relative}: {error.strerror}")
            continue
        track = fields["track"] or registry.of_file(Path(relative.name), source.encode())  # a .py file: by its imports
        if track is None:
            if input_path.is_dir():
                continue  # a .py file of neither framework: not a submission
            raise InputError(
                f'{entry}: cannot tell the track of {relative.name} (give "track": {", ".join(registry.names())})'
            )
        if track not in tracks:
            left_out[track] += 1
            continue
        fields = {**fields, "track": track, "filename": relative.name, "source": source}
        try:
            job = Job(**fields, id=_stable_id(out, entry, fields))
        except RequestError as error:  # an unknown problem, a track it has no tests for, a bad time limit
            raise InputError(f"{where or entry + ': '}{error}")
        batch.items.append(Item(job, str(base / relative)))
    for track, count in sorted(left_out.items()):
        batch.notes.append(
            f"{count} {track}-track file(s) left out: this machine runs the "
            f"{' and '.join(tracks) or 'no'} track(s) (choose with --track)"
        )
    return batch


def _folder_entries(folder: Path, problem, mode, user, time_limit_s) -> Iterator[tuple[str, PurePosixPath, dict]]:
    """The folder's submission files, walked without entering a linked folder; a linked file is listed, and
    refused when it is opened (grader.scale.batch.files)."""
    files = sorted(
        PurePosixPath(os.path.relpath(os.path.join(here, name), folder))
        for here, _folders, names in os.walk(folder)
        for name in names
        if Path(name).suffix.lower() in SUBMISSION_SUFFIXES
    )
    files = [p for p in files if not any(part.startswith((".", "_")) for part in p.parts)]
    if not files:
        raise InputError(f"{folder} holds no .cu, .cpp or Triton/CuPy .py file")
    for path in files:
        fields = {
            "problem": problem or _check_name(path.parent.name or folder.resolve().name, f"the folder of {path}"),
            "track": _track_by_name(path),
            "mode": mode,
            "user": user,
            "time_limit_s": time_limit_s,
        }
        yield str((folder / path).resolve()), path, fields


def _manifest_entries(manifest: Path, problem, mode, user, time_limit_s) -> Iterator[tuple[str, PurePosixPath, dict]]:
    for number, line in enumerate(manifest.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{manifest}:{number}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise InputError(f"{where}: not JSON: {error.msg}")
        if not isinstance(record, dict) or "file" not in record:
            raise InputError(f'{where}: expected an object with "file" (and "problem", "user")')
        if not isinstance(record["file"], str):
            raise InputError(f'{where}: "file" must be a path (text)')
        try:
            path = batch_files.confined(record["file"])
        except ValueError as error:
            raise InputError(f"{where}: {error}") from None
        chosen = record.get("problem") or problem
        if not chosen:
            raise InputError(f'{where}: no "problem" (give it in the line or with --problem)')
        _check_name(chosen, where)
        track = record.get("track") or _track_by_name(path)
        if (track is not None and track not in registry.names()) or (track is None and path.suffix.lower() != ".py"):
            raise InputError(
                f'{where}: cannot tell the track of {path.name} (give "track": {", ".join(registry.names())})'
            )
        fields = {
            "problem": chosen,
            "track": track,
            "mode": record.get("mode", mode),
            "user": str(record.get("user", user)),
            "time_limit_s": record.get("time_limit_s", time_limit_s),
        }
        yield f"{manifest.resolve()}:{number}", path, fields


def _track_by_name(path: PurePosixPath) -> str | None:
    """The track a file's name tells (.cu, .cpp); None for a .py file, whose imports tell it once it is read."""
    return None if path.suffix.lower() == ".py" else registry.of_file(Path(path.name))


def _stable_id(out: Path | None, entry: str, fields: dict) -> str:
    place = str(out.resolve()) if out is not None else STDOUT_KEY
    sha256 = hashlib.sha256(fields["source"].encode("utf-8", "surrogateescape")).hexdigest()
    parts = [place, entry, *(fields[k] for k in ("problem", "track", "mode", "user")), repr(fields["time_limit_s"])]
    parts.append(sha256)
    key = "\0".join(["kerneljudge grade-many", *parts])
    return jobs.id_from_hex(hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest())


def _check_name(name: object, where: str) -> str:
    """A problem's name as a job may give it: a slug (never a folder path), or an InputError saying where."""
    if not isinstance(name, str) or not SLUG.fullmatch(name):
        raise InputError(f"{where}: {str(name)[:200]!r} is not a problem's name: name a problem by its slug")
    return name


def finished_ids(out: Path) -> dict[str, str]:
    """{id: the grader build that made it} of the jobs whose verdict line is in `out`; a torn last line (a run
    killed mid-write) is cut off."""
    if not out.exists():
        return {}
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        with open(out, "r+b") as f:
            f.truncate(data.rfind(b"\n") + 1)
        data = data[: data.rfind(b"\n") + 1]
    done: dict[str, str] = {}
    for line in data.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("status") and record.get("submission_id"):
            done[record["submission_id"]] = str(record.get("grader_version", ""))
    return done
