"""Stored verdicts as the web judge shows them: who may see one, its moderation, and its signature.

A submission is visible to its owner, to admins, and to everyone when it is public (its owner said so) or a
reference solution or PyTorch baseline; otherwise it is not found, to others, so its existence says nothing.
Leaderboards show every user's best score whatever its visibility (that is their point); the source and the
verdict behind it need the same permission as any other.

Signatures (grader/web/signing.py) are made by the server, the first time a verdict is stored by the embedded
worker or read, and kept in verdict_signatures: the signed document does not change afterwards.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from grader.problems.catalog import load_problem
from grader.problems.spec import SpecError
from grader.records import storage
from grader.records.leaderboard import kind_of
from grader.records.schema import submissions, verdict_signatures
from grader.web import signing
from grader.web.accounts import User


def may_see(viewer: User | None, owner: str, public: bool) -> bool:
    if public or kind_of(owner) != "user":
        return True
    return viewer is not None and (viewer.is_admin or viewer.name == owner)


def flags(submission_id: str, db_url: str | None) -> dict | None:
    """{"user", "public", "hidden_reason"} of a stored submission, or None."""
    query = select(submissions.c.user, submissions.c.public, submissions.c.hidden_reason).where(
        submissions.c.submission_id == submission_id
    )
    row = storage.transact(lambda c: c.execute(query).first(), db_url)
    return dict(row._mapping) if row else None


def public_ids(submission_ids: list[str], db_url: str | None) -> set[str]:
    """Which of these submissions their owners made public (one query)."""
    query = select(submissions.c.submission_id).where(
        submissions.c.submission_id.in_(submission_ids), submissions.c.public.is_(True)
    )
    return set(storage.transact(lambda c: c.execute(query).scalars().all(), db_url))


def visible(viewer: User | None, submission_id: str, db_url: str | None) -> storage.Stored | None:
    """The stored submission if `viewer` may see it, else None (as if there were none)."""
    found = flags(submission_id, db_url)
    if found is None or not may_see(viewer, found["user"], found["public"]):
        return None
    return storage.load_submission(submission_id, db_url)


def set_public(submission_id: str, public: bool, db_url: str | None) -> None:
    query = update(submissions).where(submissions.c.submission_id == submission_id).values(public=public)
    storage.transact(lambda c: c.execute(query), db_url)


def set_hidden(submission_id: str, reason: str | None, db_url: str | None) -> None:
    """Hide a submission from the leaderboards, saying why (None: show it again)."""
    query = update(submissions).where(submissions.c.submission_id == submission_id)
    storage.transact(lambda c: c.execute(query.values(hidden_reason=reason)), db_url)


def signed(submission_id: str, judge: str, db_url: str | None) -> dict | None:
    """The signed verdict file of a stored submission (signed now if it was not yet), or None."""
    query = select(verdict_signatures).where(verdict_signatures.c.submission_id == submission_id)
    row = storage.transact(lambda c: c.execute(query).first(), db_url)
    if row is None:
        stored = storage.load_submission(submission_id, db_url)
        if stored is None or stored.verdict.submission_id != submission_id:
            return None
        sign_stored(stored, judge, db_url)
        row = storage.transact(lambda c: c.execute(query).first(), db_url)
        if row is None:
            return None
    document = json.loads(row.document)
    return {**document, "signature": {"algorithm": signing.ALGORITHM, "key_id": row.key_id, "value": row.signature}}


def sign_stored(stored: storage.Stored, judge: str, db_url: str | None) -> None:
    """Sign a stored verdict once (a second signer's insert is dropped: the first signature stands)."""
    verdict = stored.verdict.to_json()
    try:
        spec = signing.problem_spec_sha256(load_problem(verdict["problem"]))
    except SpecError:
        spec = ""  # the problem was removed since: the digest is left empty, not guessed
    made = signing.sign(signing.load_or_create_key(), signing.document(verdict, spec, judge))
    row = {
        "submission_id": verdict["submission_id"],
        "key_id": made["signature"]["key_id"],
        "document": signing.canonical({k: v for k, v in made.items() if k != "signature"}).decode(),
        "signature": made["signature"]["value"],
        "signed_at": datetime.now(timezone.utc),
    }
    try:
        storage.transact(lambda c: c.execute(insert(verdict_signatures).values(**row)), db_url)
    except IntegrityError:
        pass
