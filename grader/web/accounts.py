"""The web judge's accounts: users (argon2id password hashes, through argon2-cffi), browser sessions and API
tokens, over the users, web_sessions and api_tokens tables (grader/records/schema.py).

A user's name is what their submissions are recorded under (submissions.user). Names are 1 to 40 characters:
letters, digits, `.`, `_` and `-` (no spaces, no control or bidirectional formatting characters), not starting
with `ref:` or naming the PyTorch baseline: those mark rows on the leaderboards. Session and API tokens are 32
random bytes (URL-safe base64); only their sha256 is stored, so a copy of the database logs nobody in. An API
token is shown once, when made, and can be revoked.
"""

from __future__ import annotations

import csv
import hashlib
import re
import secrets
import unicodedata
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import Connection, delete, insert, select, update
from sqlalchemy.exc import IntegrityError

from grader.records import storage
from grader.records.schema import api_tokens, users, web_sessions

NAME = re.compile(r"[A-Za-z0-9._-]{1,40}")
RESERVED = ("pytorch", "anonymous", "admin-")
MIN_PASSWORD = 8
SESSION_DAYS = 14
TOKEN_PREFIX = "kj_"
_hasher = PasswordHasher()


class AccountError(ValueError):
    """A name, password or token refused; str() says why."""


@dataclass(frozen=True)
class User:
    id: int
    name: str
    is_admin: bool


def now() -> datetime:
    return datetime.now(timezone.utc)


def sha256(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def check_name(name: str) -> str:
    """The name, or AccountError saying why it cannot be one."""
    if any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        raise AccountError("a user name cannot hold control or text-direction characters")
    if not NAME.fullmatch(name):
        raise AccountError("a user name is 1 to 40 characters: letters, digits, '.', '_' and '-'")
    if name.lower().startswith(RESERVED) or name.lower() == "pytorch":
        raise AccountError(f"{name!r} is reserved")
    return name


def create_user(name: str, password: str, *, is_admin: bool = False, db_url: str | None = None) -> User:
    check_name(name)
    if len(password) < MIN_PASSWORD:
        raise AccountError(f"a password has at least {MIN_PASSWORD} characters")
    row = {"name": name, "password_hash": _hasher.hash(password), "is_admin": is_admin, "created_at": now()}
    try:
        key = storage.transact(lambda c: c.execute(insert(users).values(**row)).inserted_primary_key, db_url)
    except IntegrityError:
        raise AccountError(f"the name {name!r} is taken")
    return User(int(key[0]) if key else -1, name, is_admin)


def set_admin(name: str, is_admin: bool, db_url: str | None = None) -> None:
    changed = storage.transact(
        lambda c: c.execute(update(users).where(users.c.name == name).values(is_admin=is_admin)).rowcount, db_url
    )
    if not changed:
        raise AccountError(f"no user {name!r}")


def import_users(path: Path, db_url: str | None = None) -> list[tuple[str, str]]:
    """Users from a CSV file of `name[,password]` lines (a header line `name,...` is skipped); those without a
    password get a random one. Returns (name, password made here or "") for each; AccountError names the line."""
    made = []
    with path.open(newline="") as f:
        for number, fields in enumerate(csv.reader(f), start=1):
            if not fields or not fields[0].strip() or (number == 1 and fields[0].strip().lower() == "name"):
                continue
            name = fields[0].strip()
            password = fields[1].strip() if len(fields) > 1 and fields[1].strip() else ""
            given = password or secrets.token_urlsafe(12)
            try:
                create_user(name, given, db_url=db_url)
            except AccountError as error:
                raise AccountError(f"{path}, line {number}: {error}")
            made.append((name, "" if password else given))
    return made


def authenticate(name: str, password: str, db_url: str | None = None) -> User | None:
    """The user if the password is theirs (its hash upgraded when argon2's parameters changed), else None."""
    row = storage.transact(lambda c: c.execute(select(users).where(users.c.name == name)).first(), db_url)
    if row is None:
        _hasher.hash(password)  # as slow as a wrong password: no telling which names exist by timing
        return None
    try:
        _hasher.verify(row.password_hash, password)
    except (VerificationError, InvalidHashError):
        return None
    if _hasher.check_needs_rehash(row.password_hash):
        rehashed = _hasher.hash(password)
        storage.transact(
            lambda c: c.execute(update(users).where(users.c.id == row.id).values(password_hash=rehashed)), db_url
        )
    return User(row.id, row.name, row.is_admin)


def user_named(name: str, db_url: str | None = None) -> User | None:
    row = storage.transact(lambda c: c.execute(select(users).where(users.c.name == name)).first(), db_url)
    return User(row.id, row.name, row.is_admin) if row else None


def list_users(db_url: str | None = None) -> list[User]:
    rows = storage.transact(lambda c: c.execute(select(users).order_by(users.c.name)).all(), db_url)
    return [User(r.id, r.name, r.is_admin) for r in rows]


# --- browser sessions ----------------------------------------------------------------------------------------


def start_session(user: User, db_url: str | None = None) -> str:
    """A new session token for the user's cookie (a fresh one at every login: no session fixation)."""
    token = secrets.token_urlsafe(32)
    row = {"token_sha256": sha256(token), "user_id": user.id, "created_at": now()}
    row["expires_at"] = now() + timedelta(days=SESSION_DAYS)
    storage.transact(lambda c: c.execute(insert(web_sessions).values(**row)), db_url)
    return token


def session_user(token: str, db_url: str | None = None) -> User | None:
    query = (
        select(users.c.id, users.c.name, users.c.is_admin, web_sessions.c.expires_at)
        .join(users, users.c.id == web_sessions.c.user_id)
        .where(web_sessions.c.token_sha256 == sha256(token))
    )
    row = storage.transact(lambda c: c.execute(query).first(), db_url)
    if row is None or _utc(row.expires_at) < now():
        return None
    return User(row.id, row.name, row.is_admin)


def end_session(token: str, db_url: str | None = None) -> None:
    storage.transact(
        lambda c: c.execute(delete(web_sessions).where(web_sessions.c.token_sha256 == sha256(token))), db_url
    )


# --- API tokens ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenInfo:
    id: int
    label: str
    prefix: str
    created_at: datetime
    last_used_at: datetime | None
    revoked: bool


def create_token(user: User, label: str, db_url: str | None = None) -> str:
    """A new API token for the user: returned here once, stored only as its sha256."""
    label = label.strip()[:100] or "token"
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = {"user_id": user.id, "label": label, "token_sha256": sha256(token), "prefix": token[:10], "created_at": now()}
    storage.transact(lambda c: c.execute(insert(api_tokens).values(**row)), db_url)
    return token


def token_user(token: str, db_url: str | None = None) -> User | None:
    """The user an unrevoked token belongs to (its last use noted), else None."""
    digest = sha256(token)

    def read(connection: Connection):
        row = connection.execute(
            select(users.c.id, users.c.name, users.c.is_admin)
            .join(api_tokens, api_tokens.c.user_id == users.c.id)
            .where(api_tokens.c.token_sha256 == digest, api_tokens.c.revoked_at.is_(None))
        ).first()
        if row is not None:
            connection.execute(update(api_tokens).where(api_tokens.c.token_sha256 == digest).values(last_used_at=now()))
        return row

    row = storage.transact(read, db_url)
    return User(row.id, row.name, row.is_admin) if row else None


def list_tokens(user: User, db_url: str | None = None) -> list[TokenInfo]:
    query = select(api_tokens).where(api_tokens.c.user_id == user.id).order_by(api_tokens.c.id)
    rows = storage.transact(lambda c: c.execute(query).all(), db_url)
    return [
        TokenInfo(
            r.id, r.label, r.prefix, _utc(r.created_at), r.last_used_at and _utc(r.last_used_at), bool(r.revoked_at)
        )
        for r in rows
    ]


def revoke_token(user: User, token_id: int, db_url: str | None = None) -> bool:
    """Revoke one of the user's tokens; False when they have no such token."""
    query = (
        update(api_tokens)
        .where(api_tokens.c.id == token_id, api_tokens.c.user_id == user.id, api_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now())
    )
    return bool(storage.transact(lambda c: c.execute(query).rowcount, db_url))


def _utc(moment: datetime) -> datetime:
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
