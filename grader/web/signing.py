"""Signed verdicts: the judge's Ed25519 signature (the `cryptography` package) over a verdict and what it attests.

The signed document is canonical JSON (keys sorted, no spaces, UTF-8) of

    {"verdict": the verdict exactly as `grader submit --json` prints it,
     "attestation": {"source_sha256", "problem_spec_sha256", "grader_build", "device", "judge", "signed_at"}}

and the file `grader verify` reads (what the API's signed-verdict endpoint answers) is that document with
{"signature": {"algorithm": "ed25519", "key_id", "value": base64}} beside it. Verifying re-serialises the
document canonically, so a changed score, digest or device anywhere in it breaks the signature, and checks the
attestation against the verdict it travels with (the same source digest, build and device). The key id is the
first 16 hex digits of the sha256 of the raw public key: a signature from another key is refused by name before
the maths is done.

The private key lives on the judge's web host (KERNELJUDGE_SIGNING_KEY, else web/verdict-signing-key.pem under
KERNELJUDGE_DATA, 0600, made on first use); grading workers never hold it: the server signs a verdict when it is
first stored or read (a Celery worker's too).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from grader import settings
from grader.problems.spec import Problem

ALGORITHM = "ed25519"
SPEC_FILES = ("problem.yaml", "reference.py")  # what defines a problem's tests, checks and tolerances


class BadSignature(Exception):
    """A signed verdict that does not verify; str() says what is wrong."""


def canonical(document: Any) -> bytes:
    """The one byte string a JSON value has: keys sorted, no whitespace, UTF-8 (a NaN error figure as NaN, as
    Python's json writes and reads it)."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def key_path() -> Path:
    chosen = settings.SIGNING_KEY.get()
    return Path(chosen) if chosen else Path(settings.DATA.get()) / "web" / "verdict-signing-key.pem"


def load_or_create_key(path: Path | None = None) -> Ed25519PrivateKey:
    """The judge's private key, made (0600, its folder 0700) the first time."""
    path = path or key_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another process made it at the same moment: use theirs
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(pem)
    key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{path} is not an Ed25519 private key")
    return key


def public_pem(key: Ed25519PrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()[:16]


def load_public_key(pem: bytes) -> Ed25519PublicKey:
    """A public key from PEM text (or from the private key's PEM, on the judge's own host)."""
    text = pem.strip()
    try:
        if b"PRIVATE KEY" in text:
            private = serialization.load_pem_private_key(text, password=None)
            if isinstance(private, Ed25519PrivateKey):
                return private.public_key()
        else:
            public = serialization.load_pem_public_key(text)
            if isinstance(public, Ed25519PublicKey):
                return public
    except ValueError as error:
        raise ValueError(f"not a PEM key: {error}")
    raise ValueError("not an Ed25519 key")


def problem_spec_sha256(problem: Problem) -> str:
    """A digest of the files that define the problem's tests, inputs, tolerances and reference."""
    digest = hashlib.sha256()
    for name in SPEC_FILES:
        path = problem.folder / name
        digest.update(name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    return digest.hexdigest()


def document(verdict_json: dict, spec_sha256: str, judge: str) -> dict:
    """What is signed: the verdict and the facts it rests on."""
    return {
        "verdict": verdict_json,
        "attestation": {
            "source_sha256": verdict_json.get("source_sha256", ""),
            "problem_spec_sha256": spec_sha256,
            "grader_build": verdict_json.get("grader_version", ""),
            "device": verdict_json.get("device", {}),
            "judge": judge,
            "signed_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        },
    }


def sign(key: Ed25519PrivateKey, signed: dict) -> dict:
    """The signed verdict file: the document and its signature."""
    value = base64.b64encode(key.sign(canonical(signed))).decode()
    return {**signed, "signature": {"algorithm": ALGORITHM, "key_id": key_id(key.public_key()), "value": value}}


def verify(signed_file: dict, public: Ed25519PublicKey) -> dict:
    """The verdict of a signed verdict file, or BadSignature saying why it cannot be trusted."""
    signature = signed_file.get("signature")
    if not isinstance(signature, dict) or signature.get("algorithm") != ALGORITHM:
        raise BadSignature(f"no {ALGORITHM} signature in the file")
    if signature.get("key_id") != key_id(public):
        raise BadSignature(
            f"signed by another key (key id {signature.get('key_id')!r}; the judge's key is {key_id(public)!r})"
        )
    signed = {k: v for k, v in signed_file.items() if k != "signature"}
    if set(signed) != {"verdict", "attestation"}:
        raise BadSignature(f"the file holds {sorted(signed)}; a signed verdict holds a verdict and an attestation")
    try:
        public.verify(base64.b64decode(str(signature.get("value", "")), validate=True), canonical(signed))
    except (InvalidSignature, ValueError) as error:
        raise BadSignature(f"the signature does not match the verdict: it was changed after signing ({error!r})")
    verdict, attestation = signed["verdict"], signed["attestation"]
    for field, verdict_field in (("source_sha256", "source_sha256"), ("grader_build", "grader_version")):
        if attestation.get(field) != verdict.get(verdict_field):
            raise BadSignature(f"the attestation's {field} is not the verdict's")
    if attestation.get("device") != verdict.get("device"):
        raise BadSignature("the attestation's device is not the verdict's")
    return verdict
