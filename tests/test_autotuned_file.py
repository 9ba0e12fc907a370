"""The grader's reading of the autotuner's report (grader/run/autotuned.py): the file is the submission's, so
anything but a regular, bounded, strict JSON file of the report's shape is no report at all, and never an error;
the judge reads it only on a track that reports autotuning, into the verdict's `autotuned`."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from grader.judge import pipeline
from grader.run import autotuned
from grader.verdict.model import Verdict

REPORT = [
    {
        "kernel": "matmul_kernel",
        "key": {"M": "4096", "N": "2048"},
        "extra": ["torch.float16", "torch.float16", "torch.float32"],
        "config": {
            "kwargs": {"BLOCK_M": 128, "BLOCK_N": 256, "SPLIT": False, "RATIO": 0.5, "NOTE": "x", "NONE": None},
            "num_warps": 8,
            "num_stages": 4,
            "num_ctas": 1,
            "maxnreg": None,
        },
    }
]


def _write(folder: Path, data: bytes) -> Path:
    path = folder / autotuned.FILE_NAME
    path.write_bytes(data)
    return path


def _changed(change) -> bytes:
    report = json.loads(json.dumps(REPORT))
    change(report[0])
    return json.dumps(report).encode()


def test_the_grader_reads_the_file_the_worker_writes(tmp_path):
    _write(tmp_path, json.dumps(REPORT).encode())
    assert [entry.model_dump() for entry in autotuned.read(tmp_path)] == REPORT


def test_the_judge_reads_it_into_the_verdict_only_on_a_track_that_reports_autotuning(tmp_path):
    _write(tmp_path, json.dumps(REPORT).encode())
    assert pipeline._autotuned("cupy", tmp_path) == [] and pipeline._autotuned("cuda", tmp_path) == []
    verdict = Verdict("accepted", "all 2 tests passed", "gemm-fp16", "triton", "0123456789ab")
    verdict.autotuned = pipeline._autotuned("triton", tmp_path)
    assert Verdict.from_json(json.loads(json.dumps(verdict.to_json()))).autotuned == REPORT


def test_a_report_at_the_bounds_is_read(tmp_path):
    entry = json.loads(json.dumps(REPORT[0]))
    entry["kernel"] = "k" * 200
    entry["config"]["kwargs"] = {f"K{i}": i for i in range(64)}
    _write(tmp_path, json.dumps([entry] + REPORT * 63).encode())
    assert len(autotuned.read(tmp_path)) == 64


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(json.dumps(REPORT).encode() + b" " * (64 << 10), id="larger than 64 KiB"),
        pytest.param(json.dumps(REPORT).replace("0.5", "NaN").encode(), id="NaN"),
        pytest.param(json.dumps(REPORT).replace("0.5", "-Infinity").encode(), id="Infinity"),
        pytest.param(json.dumps(REPORT).replace("0.5", "1e400").encode(), id="a float beyond double"),
        pytest.param(_changed(lambda e: e["config"].update(num_warps=1 << 63)), id="an int beyond 64 bits"),
        pytest.param(_changed(lambda e: e.update(kernel="evil\x1b[2J")), id="a control character"),
        pytest.param(_changed(lambda e: e["key"].update({"M\nN": "1"})), id="a control character in a name"),
        pytest.param(json.dumps(REPORT).replace('"x"', '"\\ud800"').encode(), id="a lone surrogate"),
        pytest.param(_changed(lambda e: e.update(score_us=1.0)), id="an unknown field"),
        pytest.param(_changed(lambda e: e["config"].update(chosen=True)), id="an unknown field of the config"),
        pytest.param(_changed(lambda e: e.pop("extra")), id="a missing field"),
        pytest.param(_changed(lambda e: e["config"].update(num_warps="8")), id="a number as a string"),
        pytest.param(_changed(lambda e: e["config"].update(num_warps=True)), id="a bool for an int"),
        pytest.param(_changed(lambda e: e["config"].update(num_stages=3.0)), id="a float for an int"),
        pytest.param(_changed(lambda e: e["key"].update(M=4096)), id="a key value not as its repr"),
        pytest.param(_changed(lambda e: e["config"].update(kwargs=[1, 2])), id="a list for the kwargs"),
        pytest.param(_changed(lambda e: e["config"]["kwargs"].update(NESTED={"a": 1})), id="a nested value"),
        pytest.param(_changed(lambda e: e.update(kernel="k" * 201)), id="a string of 201 characters"),
        pytest.param(_changed(lambda e: e.update(extra=["torch.float16"] * 65)), id="65 extra items"),
        pytest.param(json.dumps(REPORT * 65).encode(), id="65 entries"),
        pytest.param(json.dumps(REPORT[0]).encode(), id="an entry, not a list"),
        pytest.param(json.dumps(REPORT).replace('"x"', '"\xe9"').encode("latin-1"), id="not UTF-8"),
        pytest.param(b"\xef\xbb\xbf" + json.dumps(REPORT).encode(), id="a byte order mark"),
        pytest.param(json.dumps(REPORT).encode()[:-1], id="cut short"),
        pytest.param(b"[" * 60000, id="nested deeper than the parser goes"),
        pytest.param(b"", id="empty (the worker never reached EXIT)"),
    ],
)
def test_anything_but_a_report_is_no_report(tmp_path, data):
    _write(tmp_path, data)
    assert autotuned.read(tmp_path) == []


def test_a_link_is_not_followed(tmp_path):
    (tmp_path / "elsewhere.json").write_text(json.dumps(REPORT))
    (tmp_path / autotuned.FILE_NAME).symlink_to(tmp_path / "elsewhere.json")
    assert autotuned.read(tmp_path) == []


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    os.mkfifo(tmp_path / autotuned.FILE_NAME)
    got: list = []
    reader = threading.Thread(target=lambda: got.append(autotuned.read(tmp_path)), daemon=True)
    reader.start()
    reader.join(10)
    assert not reader.is_alive() and got == [[]]


def test_no_file_or_a_folder_is_no_report(tmp_path):
    assert autotuned.read(tmp_path) == []
    (tmp_path / autotuned.FILE_NAME).mkdir()
    assert autotuned.read(tmp_path) == []
