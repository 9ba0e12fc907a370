"""The autotuner's report as a user sees it: a table under "Autotuned (the submission's own report)" on the
submission page (the static site's and the web judge's) and a few lines under the same label in the terminal's
verdict; nothing where the verdict has no report. Verdicts are hand-made (tests/verdicts.py), stored and loaded."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from verdicts import verdict

from grader.cli import output
from grader.records import storage
from grader.site import render
from grader.verdict.model import Verdict

LABEL = "Autotuned (the submission's own report)"
SOURCE = "import triton\n\n\ndef solve(a, b, c, M, N, K):\n    pass\n"
REPORT = [
    {
        "kernel": "matmul_kernel",
        "key": {"M": "4096", "N": "2048"},
        "extra": ["torch.float16", "torch.float16"],
        "config": {
            "kwargs": {"BLOCK_M": 128, "BLOCK_N": 256},
            "num_warps": 8,
            "num_stages": 4,
            "num_ctas": 1,
            "maxnreg": None,
        },
    },
    {
        "kernel": "softmax_kernel",
        "key": {"N": "8192"},
        "extra": ["torch.float32"],
        "config": {"kwargs": {"BLOCK_N": 1024}, "num_warps": 16, "num_stages": 1, "maxnreg": 128},
    },
]


def _triton_verdict(report: list[dict]) -> Verdict:
    tuned = verdict("alice", problem="gemm-fp16", mode="test")
    tuned.track, tuned.autotuned = "triton", report
    return tuned


def _stored_page(tmp_path, report: list[dict]) -> str:
    db = f"sqlite:///{tmp_path / 'results.db'}"
    stored = storage.load_submission(storage.save_verdict(_triton_verdict(report), SOURCE, db), db)
    assert stored is not None
    return render.submission_page(render.environment(), stored, None, doubts={})


def test_the_submission_page_shows_each_kernels_key_and_chosen_config(tmp_path):
    html = _stored_page(tmp_path, REPORT)
    section = html[html.index('<section id="autotuned">') : html.index('<section id="source">')]
    assert f"<h2>{LABEL}</h2>" in section
    rows = section[section.index("<tbody>") :].split("<tr>")[1:]
    assert "<code>matmul_kernel</code>" in rows[0]
    assert "M=4096, N=2048, torch.float16, torch.float16" in rows[0]
    assert "BLOCK_M=128, BLOCK_N=256, num_warps=8, num_stages=4, num_ctas=1" in rows[0] and "maxnreg" not in rows[0]
    assert "N=8192, torch.float32" in rows[1] and "BLOCK_N=1024, num_warps=16, num_stages=1, maxnreg=128" in rows[1]


def test_a_submission_page_without_a_report_has_no_autotuned_section(tmp_path):
    html = _stored_page(tmp_path, [])
    assert 'id="autotuned"' not in html and "Autotuned" not in html


def test_the_web_judge_shows_the_report_with_its_hostile_text_made_harmless(tmp_path, monkeypatch):
    pytest.importorskip("fastapi", reason="the web judge needs fastapi (pip install -e .)")
    from fastapi.testclient import TestClient

    from grader.web import verdicts
    from grader.web.app import create_app
    from grader.web.config import WebConfig

    monkeypatch.setenv("KERNELJUDGE_DATA", str(tmp_path / "data"))
    monkeypatch.delenv("KERNELJUDGE_SIGNING_KEY", raising=False)
    config = WebConfig(db_url=f"sqlite:///{tmp_path / 'judge.db'}", data_dir=tmp_path / "data")
    hostile = [dict(REPORT[0], kernel="<script>alert(1)</script>\u202ekernel")]
    tuned = _triton_verdict(hostile)
    storage.save_verdict(tuned, SOURCE, config.db_url)
    verdicts.set_public(tuned.submission_id, True, config.db_url)
    page = TestClient(create_app(config, judge="test-judge"), base_url="http://testserver").get(
        f"/submissions/{tuned.submission_id}.html"
    )
    assert page.status_code == 200
    section = page.text[page.text.index('<section id="autotuned">') :]
    assert f"<h2>{LABEL}</h2>" in section and "BLOCK_M=128, BLOCK_N=256, num_warps=8" in section
    assert "<script>alert" not in page.text and "\u202e" not in page.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;⟦U+202E⟧kernel" in section


@pytest.fixture
def screen(monkeypatch) -> io.StringIO:
    """What print_verdict writes, as an 80-column terminal without colour shows it."""
    written = io.StringIO()
    monkeypatch.setattr(output, "console", Console(file=written, width=80, color_system=None, highlight=False))
    return written


def test_the_terminal_verdict_lists_the_report_under_its_label(screen):
    output.print_verdict(_triton_verdict(REPORT))
    shown = screen.getvalue().splitlines()
    at = shown.index(LABEL + ":")
    assert shown[at + 1 : at + 3] == [
        "  matmul_kernel (M=4096, N=2048, torch.float16, torch.float16): BLOCK_M=128, BLOCK_N=256, num_warps=8, "
        "num_stages=4, num_ctas=1",
        "  softmax_kernel (N=8192, torch.float32): BLOCK_N=1024, num_warps=16, num_stages=1, maxnreg=128",
    ]


def test_the_terminal_verdict_says_nothing_of_autotuning_without_a_report(screen):
    output.print_verdict(_triton_verdict([]))
    assert "Autotuned" not in screen.getvalue()
