"""Verdict statuses: the only names a verdict's `status` may take (the verdict contract in docs/architecture.md).

`Status` is a str enum, so a status compares equal to its name ("accepted"), prints as it, and is stored and
sent as it; a verdict holds the plain string (`Status(x).value`), so JSON and the database never see the enum.
"""

from enum import Enum


class Status(str, Enum):
    ACCEPTED = "accepted"
    WRONG_ANSWER = "wrong_answer"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    REJECTED = "rejected"

    def __str__(self) -> str:
        return self.value
