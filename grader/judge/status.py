"""Verdict statuses: the only names a verdict's `status` may take (DESIGN.md's contract)."""

ACCEPTED = "accepted"
WRONG_ANSWER = "wrong_answer"
COMPILE_ERROR = "compile_error"
RUNTIME_ERROR = "runtime_error"
TIMEOUT = "timeout"
REJECTED = "rejected"

ALL = (ACCEPTED, WRONG_ANSWER, COMPILE_ERROR, RUNTIME_ERROR, TIMEOUT, REJECTED)
