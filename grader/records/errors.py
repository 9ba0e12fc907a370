"""The ways the results database can be unusable, each with a message that says what to do about it.

They subclass SQLAlchemy's error so that a command which already turns database errors into a one-line
message (grader/cli/results.py) shows these too; str() is the whole message, without SQLAlchemy's link.
"""

from __future__ import annotations

from sqlalchemy.exc import SQLAlchemyError


class StorageError(SQLAlchemyError):
    """The database cannot do what was asked; str() says why and what to do."""


class ReadOnlyDatabase(StorageError):
    """The database's folder (or file) cannot be written: it was opened read-only, and a write was refused."""


class DatabaseFull(StorageError):
    """The disk holding the database is full: the write was refused whole, and nothing stored before is lost."""


class NoDatabase(StorageError):
    """There is no database file, and its folder cannot hold a new one."""
