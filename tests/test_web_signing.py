"""Signed verdicts: `grader verify` accepts a verdict as the judge signed it, and rejects one whose score or source
digest was changed, or that another key signed. The verdict is stored, signed by the server's code (the first
read signs it) and fetched through the API, as a user would download it."""

from __future__ import annotations

import copy
import json

import pytest
from verdicts import verdict
from web_helpers import grader_command

pytest.importorskip("cryptography", reason="signed verdicts need cryptography (pip install -e .)")

from fastapi.testclient import TestClient

from grader.records import storage
from grader.web import signing, verdicts
from grader.web.app import create_app
from grader.web.config import WebConfig


@pytest.fixture
def signed_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("KERNELJUDGE_SIGNING_KEY", raising=False)
    config = WebConfig(db_url=f"sqlite:///{tmp_path / 'judge.db'}", data_dir=tmp_path / "data")
    client = TestClient(create_app(config, judge="judge.example"))
    mine = verdict("alice", [120.0, 240.0])
    storage.save_verdict(mine, "// alice's kernel", config.db_url)
    verdicts.set_public(mine.submission_id, True, config.db_url)
    document = client.get(f"/api/v1/submissions/{mine.submission_id}/signed").json()
    assert client.get(f"/api/v1/submissions/{mine.submission_id}/signed").json() == document  # signed once
    key = tmp_path / "judge.pem"
    key.write_text(client.get("/api/v1/signing-key").json()["public_key_pem"])
    env = {"KERNELJUDGE_DATA": str(tmp_path / "elsewhere"), "PATH": "/usr/bin:/bin"}
    return {"document": document, "key": key, "folder": tmp_path, "env": env, "verdict": mine}


def _verify(setup: dict, document: dict, key=None) -> tuple[int, str]:
    path = setup["folder"] / "verdict.json"
    path.write_text(json.dumps(document))
    import os

    env = {**os.environ, **setup["env"]}
    done = grader_command(env, "verify", str(path), "--key", str(key or setup["key"]))
    return done.returncode, done.stdout + done.stderr


def test_an_untouched_verdict_verifies(signed_file):
    document = signed_file["document"]
    assert document["verdict"] == signed_file["verdict"].to_json()  # the same JSON as `grader submit --json`
    attestation = document["attestation"]
    assert attestation["source_sha256"] == signed_file["verdict"].source_sha256
    assert len(attestation["problem_spec_sha256"]) == 64 and attestation["judge"] == "judge.example"
    code, said = _verify(signed_file, document)
    assert code == 0, said
    assert "verified" in said and signed_file["verdict"].submission_id in said


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda d: d["verdict"].update(score_us=d["verdict"]["score_us"] / 2), id="score"),
        pytest.param(lambda d: d["verdict"].update(status="accepted", user="mallory"), id="user"),
        pytest.param(lambda d: d["attestation"].update(source_sha256="0" * 64), id="attested-source-digest"),
        pytest.param(
            lambda d: (d["verdict"].update(source_sha256="0" * 64), d["attestation"].update(source_sha256="0" * 64)),
            id="source-digest-both",
        ),
        pytest.param(lambda d: d["verdict"]["benchmarks"][0].update(median_us=1.0), id="a-benchmark"),
    ],
)
def test_a_changed_verdict_is_rejected(signed_file, change):
    document = copy.deepcopy(signed_file["document"])
    change(document)
    code, said = _verify(signed_file, document)
    assert code == 1 and "NOT VERIFIED" in said and "changed after signing" in said, said


def test_a_signature_from_another_key_is_rejected(signed_file):
    other = signing.load_or_create_key(signed_file["folder"] / "other" / "key.pem")
    document = copy.deepcopy(signed_file["document"])
    forged = signing.sign(other, {k: v for k, v in document.items() if k != "signature"})
    code, said = _verify(signed_file, forged)
    assert code == 1 and "another key" in said, said
    other_public = signed_file["folder"] / "other.pem"
    other_public.write_text(signing.public_pem(other))
    code, said = _verify(signed_file, document, key=other_public)  # the judge's verdict, checked against a stranger
    assert code == 1 and "another key" in said, said
    document["signature"]["key_id"] = signing.key_id(signing.load_public_key(signed_file["key"].read_bytes()))
    forged["signature"]["key_id"] = document["signature"]["key_id"]  # claims the judge's key id
    code, said = _verify(signed_file, forged)
    assert code == 1 and "changed after signing" in said, said
