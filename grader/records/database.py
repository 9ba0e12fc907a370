"""The database in force and its schema: the URL, one engine per URL and process, Alembic upgrades, transactions.

The first use of a URL in a process brings its schema to the newest Alembic revision. A database already there
(the usual case: every command after the first) is recognised by reading its `alembic_version` row against the
newest revision file, without importing Alembic, which keeps read-only commands like `history` quick. Every
piece of work is one transaction, retried while SQLite is locked; a full disk or a read-only file becomes the
StorageError that says so (records/sqlite.py, records/errors.py).
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy import Connection, Engine, create_engine, inspect
from sqlalchemy.exc import OperationalError

from grader import settings
from grader.records import sqlite
from grader.records.errors import StorageError

if TYPE_CHECKING:
    from alembic.config import Config

WRITE_ATTEMPTS = 8
MIGRATIONS = Path(__file__).resolve().parent / "migrations"
T = TypeVar("T")
_read_only: set[str] = set()  # the URLs whose engine was opened read-only


def data_dir() -> Path:
    return Path(settings.DATA.get())


def resolve_url(db_url: str | None = None) -> str:
    """The database URL in force: the argument, else $KERNELJUDGE_DB, else the default SQLite file."""
    return db_url or settings.DB.get() or f"sqlite:///{data_dir() / 'kerneljudge.db'}"


def alembic_config(connection: Connection) -> Config:
    """An Alembic config that migrates through `connection` (see records/migrations/env.py)."""
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["connection"] = connection
    return config


def engine(db_url: str | None = None) -> Engine:
    """The engine for a URL (see resolve_url), its schema upgraded to the newest revision."""
    return _engine(resolve_url(db_url))


@functools.cache
def _engine(resolved: str) -> Engine:
    """Made and migrated once per URL and process; a SQLite file that cannot be written is opened read-only."""
    path = sqlite.file_of(resolved)
    if path is not None and sqlite.folder_problem(path):
        _read_only.add(resolved)
        return sqlite.read_only_engine(path)
    try:
        made = sqlite.writable_engine(path) if path is not None else create_engine(resolved)
        _run(made, _upgrade, path)
    except (StorageError, OSError) as error:
        if path is None or not sqlite.folder_problem(path):  # not the folder: a real failure
            raise sqlite.translate(error, path) or error
        _read_only.add(resolved)
        return sqlite.read_only_engine(path)
    return made


def check_writable(db_url: str | None = None) -> None:
    """Raise the StorageError a write would meet when the database was opened read-only (before long work)."""
    resolved = resolve_url(db_url)
    _engine(resolved)
    path = sqlite.file_of(resolved)
    if resolved in _read_only and path is not None:
        raise sqlite.unwritable(path)


def transact(work: Callable[[Connection], T], db_url: str | None = None) -> T:
    """Run `work` in one transaction on the database in force (retried while locked; failures translated)."""
    resolved = resolve_url(db_url)
    return _run(_engine(resolved), work, sqlite.file_of(resolved))


@functools.cache
def head_revision() -> str:
    """The newest revision: revision files are named NNNN_what.py and each revises the one before it."""
    return max(path.name.split("_", 1)[0] for path in (MIGRATIONS / "versions").glob("[0-9]*_*.py"))


def _stored_revision(connection: Connection) -> str | None:
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.exec_driver_sql("SELECT version_num FROM alembic_version").scalar()


def _upgrade(connection: Connection) -> None:
    if _stored_revision(connection) == head_revision():
        return  # up to date: Alembic is not even imported
    if connection.dialect.name == "postgresql":  # one migrating process at a time
        connection.exec_driver_sql("SELECT pg_advisory_xact_lock(4242001)")
    from alembic import command

    command.upgrade(alembic_config(connection), "head")


def _run(made: Engine, work: Callable[[Connection], T], path: Path | None) -> T:
    """Run `work` in one transaction, retrying it from the start while the database is locked; a full disk or a
    read-only file becomes the StorageError that says so."""
    for attempt in range(WRITE_ATTEMPTS):
        try:
            with made.begin() as connection:
                return work(connection)
        except OperationalError as error:
            text = str(error.orig).lower()
            if attempt < WRITE_ATTEMPTS - 1 and ("locked" in text or "busy" in text):
                time.sleep(random.uniform(0.05, 0.2) * 2**attempt)
                continue
            translated = sqlite.translate(error, path)
            if translated is not None:
                raise translated from error
            raise
    raise AssertionError("unreachable")
