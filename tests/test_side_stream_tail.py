"""The test calls' side-stream rule (grader/judge/pipeline.py): device work that outlives solve in every draw of a
test is `rejected`; one draw stretched by the machine, or a long call's proportionate tail, is not. On records
written here as the CUDA supervisor writes `<test>.calls` (draw, claimed ms, tail ms). No GPU needed.
"""

from __future__ import annotations

import pytest

from grader.judge import pipeline


def _tail(tmp_path, rows):
    (tmp_path / "t.calls").write_text("".join(f"{d} {call} {tail}\n" for d, (call, tail) in enumerate(rows)))
    return pipeline._side_stream_tail_ms(tmp_path, "t")


def test_work_left_on_a_side_stream_in_every_draw_is_caught(tmp_path):
    assert _tail(tmp_path, [(0.01, 20.3), (0.01, 20.1)]) == pytest.approx(20.1)


def test_one_draw_kept_off_its_core_is_not_a_side_stream(tmp_path):
    # an honest 5 ms naive softmax on the H100: 2.44 ms of tail in one call, none in the other
    assert _tail(tmp_path, [(4.99, 2.44), (4.99, 0.01)]) is None


def test_a_long_call_may_have_a_proportionate_tail(tmp_path):
    assert _tail(tmp_path, [(8.0, 3.5), (8.0, 3.9)]) is None
    assert _tail(tmp_path, [(8.0, 4.5), (8.0, 4.2)]) == pytest.approx(4.2)


@pytest.mark.parametrize("text", ["", "0 0.1\n1 0.1\n", "0 0.1 x\n", "0 0.1 30\n"])
def test_a_cpu_track_or_incomplete_record_has_no_tail(tmp_path, text):
    (tmp_path / "t.calls").write_text(text)
    assert pipeline._side_stream_tail_ms(tmp_path, "t") is None
