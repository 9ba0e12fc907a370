"""How a SQLite database file is opened, for writing where it can be and read-only where it cannot, and what
a failure of the file means to the person running the command.

Writable: WAL mode, and each transaction takes the write lock when it begins (BEGIN IMMEDIATE), waiting for it
up to a busy timeout, so several `grader submit` processes can write at once. The file (and the -wal and -shm
files SQLite makes beside it, which get its mode) is readable by its owner alone: the sandboxed harness runs as
another uid and must not read other people's sources.

Read-only: when the file's folder cannot be written (a read-only mount, another user's folder) or its disk is
full. SQLite makes files beside a WAL database even to read it (the -shm index): where they are not there (the
last writer closed cleanly, everything is in the file) the file is opened immutable, read alone as it is on
disk; where a -wal file holds transactions not yet copied into the file (a writer still open, or one that
could not checkpoint on a full disk), it is opened read-only with them, through the -shm file beside it.
Reading works (`grader history`, leaderboards, a grade-many that resumes); a write raises ReadOnlyDatabase or
DatabaseFull.
"""

from __future__ import annotations

import errno
import os
import shutil
import sqlite3
from pathlib import Path
from urllib.parse import quote

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url

from grader.records.errors import DatabaseFull, NoDatabase, ReadOnlyDatabase, StorageError

BUSY_TIMEOUT_MS = 30_000
FULL_BELOW_BYTES = 1 << 20  # a disk with less free space than this counts as full
READ_ONLY, FULL = "read-only", "full"


def file_of(url: str) -> Path | None:
    """The database file of a SQLite URL; None for another kind of database or an in-memory one."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or not parsed.database or parsed.database == ":memory:":
        return None
    return Path(parsed.database)


def folder_problem(path: Path) -> str | None:
    """READ_ONLY when the file or its folder cannot be written, FULL when its disk is full, else None."""
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not os.access(existing, os.W_OK | os.X_OK) or (path.exists() and not os.access(path, os.W_OK)):
        return READ_ONLY
    return FULL if shutil.disk_usage(existing).free < FULL_BELOW_BYTES else None


def writable_engine(path: Path) -> Engine:
    _private_file(path)
    made = create_engine(f"sqlite:///{path}")
    event.listen(made, "connect", _connect_writable)
    event.listen(made, "begin", lambda connection: connection.exec_driver_sql("BEGIN IMMEDIATE"))
    return made


def read_only_engine(path: Path) -> Engine:
    """The file opened read-only and immutable; NoDatabase when there is none to read."""
    if not path.is_file():
        raise NoDatabase(f"there is no database at {path}, and none can be made there: {_why_not_writable(path)}")
    wal = path.with_name(path.name + "-wal")
    pending = wal.exists() and wal.stat().st_size > 0  # immutable would skip it and read a torn database
    uri = f"file:{quote(str(path.resolve()))}?mode=ro" + ("" if pending else "&immutable=1")
    made = create_engine("sqlite://", creator=lambda: sqlite3.connect(uri, uri=True))
    event.listen(made, "connect", _connect_read_only)
    event.listen(made, "begin", lambda connection: connection.exec_driver_sql("BEGIN"))
    return made


def translate(error: BaseException, path: Path | None) -> StorageError | None:
    """The StorageError a failure of the database (or of its file) means, or None when it means none of them."""
    text = str(getattr(error, "orig", None) or error).lower()
    if (
        (isinstance(error, OSError) and error.errno == errno.ENOSPC)
        or "no space left" in text
        or "disk is full" in text
    ):
        return DatabaseFull(full_message(path))
    if path is None:
        return None
    state = folder_problem(path)
    io_failure = any(words in text for words in ("disk i/o error", "readonly", "read-only", "unable to open"))
    io_failure = io_failure or (isinstance(error, OSError) and error.errno in (errno.EROFS, errno.EACCES, errno.EPERM))
    if state == FULL and io_failure:
        return DatabaseFull(full_message(path))
    if state == READ_ONLY and io_failure:
        return ReadOnlyDatabase(read_only_message(path))
    if "readonly database" in text:  # opened read-only earlier; the folder has changed since
        return ReadOnlyDatabase(
            f"the database {path} was opened read-only (its folder was read-only or full then); run again"
        )
    return None


def unwritable(path: Path) -> StorageError:
    """The error for a write to a database that was opened read-only."""
    return (
        DatabaseFull(full_message(path)) if folder_problem(path) == FULL else ReadOnlyDatabase(read_only_message(path))
    )


def full_message(path: Path | None) -> str:
    where = "the database server" if path is None else f"the database folder {path.parent}"
    free = "" if path is None else f" ({_free(path):,} bytes free)"
    return (
        f"the disk holding {where} is full{free}: nothing was written, and everything stored before is intact; "
        "free some space (or choose another database with --db) and run again"
    )


def read_only_message(path: Path) -> str:
    return (
        f"the database {path} cannot be written: {_why_not_writable(path)}. It was opened read-only: "
        "listing and showing work, storing does not; choose a writable database with --db or $KERNELJUDGE_DB"
    )


def _why_not_writable(path: Path) -> str:
    if folder_problem(path) == FULL:
        return f"the disk holding {path.parent} is full"
    if path.exists() and os.access(path.parent, os.W_OK):
        return "the file is read-only"
    return f"its folder {path.parent} is read-only"


def _free(path: Path) -> int:
    existing = path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    return shutil.disk_usage(existing).free


def _private_file(path: Path) -> None:
    """The file readable by its owner alone, made if missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    if path.stat().st_uid == os.geteuid():
        path.chmod(0o600)


def _connect_writable(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN IMMEDIATE instead
    cursor = dbapi_connection.cursor()
    cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA journal_mode = WAL")
    cursor.execute("PRAGMA synchronous = NORMAL")
    cursor.execute("PRAGMA foreign_keys = ON")
    cursor.close()


def _connect_read_only(dbapi_connection, _record) -> None:
    dbapi_connection.isolation_level = None  # SQLAlchemy's "begin" event issues BEGIN
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA query_only = ON")
    cursor.close()
