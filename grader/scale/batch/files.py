"""Opening the submission files a batch names as untrusted input: inside the batch's folder, through no symbolic
link, and with the rights of whoever owns the batch.

A batch is a folder or a manifest, written by someone who may not be the operator (grade-many run as root over
a folder of uploads). So a file is opened from the batch's folder one component at a time, each with
O_NOFOLLOW (a symbolic link, to a file or to a folder on the way, is refused, never followed), a path that is
absolute or climbs out with `..` is refused, and, where the grader runs as root, every folder on the way must
be searchable and the file readable by the owner of the manifest or folder (its mode bits for that user and
that user's groups): what the owner could not read, root does not read for them. ACLs are not consulted, so a
file that only an ACL lets the owner read is refused.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from grader.judge import intake

DIRECTORY_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # a FIFO does not block the open


class RefusedFile(Exception):
    """A file the batch may not name, or its owner could not read; str() says which and why."""


@dataclass(frozen=True)
class Reader:
    """Whose rights a batch's files are read with: None for the grader's own (not root: the OS checks)."""

    uid: int | None
    gids: frozenset[int] = frozenset()

    @classmethod
    def owner_of(cls, path: Path) -> Reader:
        """The owner of the manifest or folder `path` where the grader is root (and the owner is not), else
        the grader itself."""
        if os.geteuid() != 0:
            return cls(None)
        uid = path.stat().st_uid  # the operator named it: a link to it is the operator's, the batch is its target's
        if uid == 0:
            return cls(None)
        return cls(uid, frozenset(_groups_of(uid)))

    def may(self, info: os.stat_result, need: int) -> bool:
        """Whether this reader has `need` (a mask of 4 read, 1 search) on a file with this stat."""
        if self.uid is None:
            return True
        mode = info.st_mode
        if info.st_uid == self.uid:
            bits = (mode >> 6) & 7
        elif info.st_gid in self.gids:
            bits = (mode >> 3) & 7
        else:
            bits = mode & 7
        return bits & need == need


def confined(relative: str) -> PurePosixPath:
    """A manifest's "file" as a path below the manifest's folder; ValueError for an absolute one or a `..`."""
    if "\0" in relative:
        raise ValueError(f"{relative!r}: a NUL character in a file name")
    path = PurePosixPath(relative)
    if not relative or path.is_absolute():
        raise ValueError(f"{relative!r}: a file is named relative to the manifest's folder, never by an absolute path")
    if ".." in path.parts:
        raise ValueError(f"{relative!r}: a file must lie in the manifest's folder (no `..`)")
    return path


def read_source(base: Path, relative: PurePosixPath, reader: Reader) -> str:
    """The submission at `base`/`relative`, checked at intake (grader.judge.intake): opened without following
    any link below `base` and with `reader`'s rights. RefusedFile or intake.SourceError, with the reason."""
    shown = str(base / relative)
    folder = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        _check(folder, reader, 1, shown, "its folder")
        for part in relative.parts[:-1]:
            try:
                inner = os.open(part, DIRECTORY_FLAGS, dir_fd=folder)
            except OSError as error:
                raise RefusedFile(f"{shown}: {_why(error, part, folder)}") from None
            os.close(folder)
            folder = inner
            _check(folder, reader, 1, shown, f"its folder {part}")
        try:
            fd = os.open(relative.name, FILE_FLAGS, dir_fd=folder)
        except OSError as error:
            raise RefusedFile(f"{shown}: {_why(error)}") from None
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(file.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise RefusedFile(f"{shown}: not a regular file")
        _check(file.fileno(), reader, 4, shown, "the file")
        data = file.read(intake.MAX_SOURCE_BYTES + 1)
    if len(data) > intake.MAX_SOURCE_BYTES:
        raise intake.SourceError(f"{shown}: {intake.too_big(info.st_size)}")
    return intake.validate_source(data, shown)


def _check(fd: int, reader: Reader, need: int, shown: str, what: str) -> None:
    if not reader.may(os.fstat(fd), need):
        raise RefusedFile(f"{shown}: the batch's owner (uid {reader.uid}) may not {_verb(need)} {what}")


def _verb(need: int) -> str:
    return "read" if need == 4 else "enter"


def _why(error: OSError, part: str = "", folder: int = -1) -> str:
    """ELOOP (O_NOFOLLOW met a link) and ENOTDIR (a link or a file where a folder was named; which one, from
    `part`'s own entry in `folder`) in the batch's words; anything else in the system's."""
    link = error.errno == errno.ELOOP
    if error.errno == errno.ENOTDIR and folder >= 0:
        try:
            link = stat.S_ISLNK(os.stat(part, dir_fd=folder, follow_symlinks=False).st_mode)
        except OSError:
            pass
    if link:
        return f"{part or 'the file'} is a symbolic link: not followed"
    if error.errno == errno.ENOTDIR:
        return f"{part} is not a folder"
    return error.strerror or str(error)


def _groups_of(uid: int) -> list[int]:
    """The user's primary and supplementary groups (NSS); none for a uid of no user."""
    try:
        entry = pwd.getpwuid(uid)
    except KeyError:
        return []
    return os.getgrouplist(entry.pw_name, entry.pw_gid)
