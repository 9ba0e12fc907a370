"""The one grading request every way in makes (grader/judge/grading_request.py): what it refuses, with the words a
user reads, and that the ways in (the Celery client, a batch, the warm worker) refuse through it alike."""

from __future__ import annotations

import json
import math
import pickle

import pytest
import yaml
from conftest import MINI_PROBLEM

from grader.judge.grading_request import GradingRequest, RequestError
from grader.judge.intake import SourceError

SOURCE = "void solve(const float* input, float* output, int M, int N) {}\n"


def request(**changes) -> GradingRequest:
    fields = dict(problem=MINI_PROBLEM, track="cpu", filename="k.cpp", source=SOURCE, user="u", mode="test")
    return GradingRequest(**{**fields, **changes})


@pytest.mark.parametrize(
    "changes, says",
    [
        ({"problem": "no-such-problem"}, "unknown problem 'no-such-problem': a problem is named by its slug (known: "),
        ({"problem": "../softmax-mini"}, "unknown problem '../softmax-mini': a problem is named by its slug"),
        ({"track": "fortran"}, "unknown track 'fortran' (tracks: cuda, cpu, triton, cupy)"),
        ({"mode": "bench"}, "unknown mode 'bench' (modes: test, submit)"),
        ({"time_limit_s": 0}, "time limit 0 s: more than 0 and at most 3600 s"),
        ({"time_limit_s": 86400.0}, "time limit 86400 s: more than 0 and at most 3600 s"),
        ({"time_limit_s": math.nan}, "time limit 'nan': a number of seconds"),
        ({"time_limit_s": "10"}, "time limit '10': a number of seconds"),
        ({"filename": "../k.cpp"}, "filename '../k.cpp': a file's own name, without a folder"),
        ({"user": 7}, "user: must be text, not int"),
    ],
)
def test_a_request_is_refused_saying_which_field_and_why(mini_problem, changes, says):
    with pytest.raises(RequestError) as refused:
        request(**changes)
    assert str(refused.value).startswith(says), str(refused.value)


@pytest.mark.parametrize(
    "source, says",
    [
        ("void solve();\x00", "k.cpp: a NUL byte at line 1 (byte 13): a source must be text"),
        ("x" * ((1 << 20) + 1), "k.cpp: 1,048,577 bytes; a source may be at most 1,048,576 bytes (1 MiB)"),
        (b"caf\xe9".decode("utf-8", "surrogateescape"), "k.cpp: not UTF-8 text (character 3); save it as UTF-8"),
    ],
)
def test_a_source_is_refused_at_intake(mini_problem, source, says):
    with pytest.raises(SourceError) as refused:
        request(source=source)
    assert str(refused.value) == says


def test_a_track_the_problem_has_no_tests_for_is_refused(mini_problem):
    spec_path = mini_problem / "problems" / MINI_PROBLEM / "problem.yaml"
    spec = yaml.safe_load(spec_path.read_text())
    for test in spec["tests"]:
        test["tracks"] = ["cpu"]
    spec_path.write_text(yaml.safe_dump(spec))
    with pytest.raises(RequestError) as refused:
        request(track="cuda", filename="k.cu")
    assert (
        str(refused.value)
        == f"problem '{MINI_PROBLEM}' has no tests for the cuda track (its tests are for the cpu device)"
    )
    assert request(track="cpu").track == "cpu"


def test_a_request_travels_as_json_and_pickle_unchanged(mini_problem):
    made = request(time_limit_s=2.5)
    assert GradingRequest.from_dict(json.loads(json.dumps(made.to_dict()))) == made
    assert pickle.loads(pickle.dumps(made)) == made
    with pytest.raises(RequestError, match="a grading request needs source"):
        GradingRequest.from_dict({"problem": MINI_PROBLEM, "track": "cpu", "filename": "k.cpp"})
    with pytest.raises(RequestError, match="a grading request is a JSON object"):
        GradingRequest.from_dict(["softmax"])


def test_the_ways_in_refuse_through_the_same_request(mini_problem, tmp_path, monkeypatch):
    from grader.scale.batch import inputs as batch_input
    from grader.scale.distributed import client
    from grader.scale.warm import worker as warm_worker

    kernel = tmp_path / "k.cpp"
    kernel.write_text(SOURCE)
    with pytest.raises(client.RequestError, match=r"^unknown mode 'bench' \(modes: test, submit\)$"):
        client.job_for_file(MINI_PROBLEM, kernel, mode="bench")
    manifest = tmp_path / "batch.jsonl"
    manifest.write_text(json.dumps({"problem": MINI_PROBLEM, "file": "k.cpp", "time_limit_s": -1}) + "\n")
    with pytest.raises(batch_input.InputError, match=r"batch\.jsonl:1: time limit -1 s: more than 0"):
        batch_input.collect(manifest, tracks=["cpu"])
    monkeypatch.chdir(tmp_path)
    message = {**request().to_dict(), "track": "fortran", "cwd": str(tmp_path)}
    answer = warm_worker._grade(message, connection=None, log=lambda _said: None)  # type: ignore[arg-type]
    assert answer == {"usage_error": "unknown track 'fortran' (tracks: cuda, cpu, triton, cupy)"}
