"""Profiles from recorded Nsight Compute CSV (tests/fixtures/profile/): units, the harness's kernels left out, the
figures and the advice a user reads, and the JSON schema checked in at docs/profile.schema.json. No GPU needed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grader.perf import roofline
from grader.perf.ceilings import Ceilings
from grader.problems.catalog import load_problem
from grader.profile import ncu, parse, session, summary
from grader.profile.model import Profile, schema_text

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "tests" / "fixtures" / "profile"
H100 = Ceilings(3.0e12, 5.1e13, 5.0e13, 3.35e12, 4.9e14, "measured (test)")  # copy, FMA, SGEMM as an H100 measures


def _profile(name: str) -> Profile:
    problem = load_problem("softmax")
    size_set = session.benchmark(problem, "square_8k")
    return session.from_csv(problem, size_set, (FIXTURES / name).read_text(), H100, device="NVIDIA H100 80GB HBM3")


def test_the_checked_in_schema_is_the_models():
    assert (REPO / "docs" / "profile.schema.json").read_text() == schema_text(), (
        "docs/profile.schema.json is stale: grader profile --schema > docs/profile.schema.json"
    )


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("softmax-*.csv")))
def test_json_of_every_fixture_is_valid_against_the_schema(name):
    data = json.loads(_profile(name).model_dump_json())
    assert Profile.model_validate(data, strict=False).model_dump(mode="json") == data
    assert set(data) <= set(json.loads(schema_text())["properties"])
    assert data["kernels"] and data["totals"]["duration_us"] > 0


def test_units_become_base_units():
    assert parse.scale("nsecond") == 1e-9
    assert parse.scale("usecond") == 1e-6
    assert parse.scale("Gbyte/second") == 1e9
    assert parse.scale("Kbyte/block") == 1e3
    assert parse.scale("cycle/nsecond") == pytest.approx(1e9)
    assert parse.scale("%") == 1.0
    assert parse.scale("ns") == 1e-9 and parse.scale("byte/s") == 1.0  # ncu 2025.3's --print-units base
    assert parse.number("1,104,000,000") == 1.104e9
    assert parse.number("n/a") is None


def test_the_harness_kernels_are_left_out_by_name():
    launched = parse.launches((FIXTURES / "softmax-01_naive-square_8k.csv").read_text())
    assert [launch.from_harness for launch in launched] == [True, True, False]
    profile = _profile("softmax-01_naive-square_8k.csv")
    assert profile.harness_kernels_left_out == 2
    assert [k.name.split("(")[0] for k in profile.kernels] == ["softmax_naive"]
    assert parse.is_harness_kernel("kj::read_flush_kernel(const int4 *, unsigned long, int *)")
    assert not parse.is_harness_kernel("my_fill_kernel_v2(float *)")


def test_a_submission_kernel_named_like_the_harness_is_kept():
    def launch(i: int, name: str) -> parse.Launch:
        return parse.Launch(id=i, name=name)

    launched = [
        launch(0, "fill_kernel(void *, unsigned long)"),  # unqualified, before solve: the harness's
        launch(1, "poison_kernel(void *, unsigned long)"),
        launch(2, "my_softmax(const float *, float *)"),
        launch(3, "fill_kernel(float *, int)"),  # after the submission's first launch: its own
        launch(4, "kj::poison_kernel(void *, unsigned long, kjg::Dtype)"),  # qualified: always the harness's
    ]
    assert [x.id for x in parse.submissions(launched)] == [2, 3]


def test_a_csv_without_a_header_is_a_report_error():
    with pytest.raises(parse.ReportError):
        parse.launches("==PROF== Disconnected\n")


def test_the_naive_rung_is_told_its_grid_is_too_small_and_its_loads_uncoalesced():
    profile = _profile("softmax-01_naive-square_8k.csv")
    naive = profile.kernels[0]
    assert naive.duration_us == pytest.approx(45400.0)
    assert naive.global_load_sector_efficiency_pct == pytest.approx(12.5)
    assert naive.global_load_bytes_per_instruction == pytest.approx(4.0)
    assert naive.stalls[0].reason == "long_scoreboard"
    said = " ".join(profile.advice)
    assert "memory-bound benchmark at 0.39% of this GPU's speed of light" in said
    assert "the grid has 32 blocks for 132 SMs" in said
    assert "4-byte and 12% sector-efficient" in said


def test_the_top_rung_is_memory_bound_near_the_copy_ceiling():
    profile = _profile("softmax-04_online-square_8k.csv")
    top = profile.kernels[0]
    assert top.dram_fraction_of_copy == pytest.approx(2.95e12 / 3.0e12)
    assert top.occupancy.limiter is None  # theoretical occupancy 100%: nothing limits it
    assert profile.totals.sol == pytest.approx(8 * 8192 * 8192 / 3.0e12 / 182.2e-6)
    assert profile.advice[0].startswith("memory-bound benchmark at 98% of this GPU's speed of light")
    assert "memory-bound at 98% of copy bandwidth" in profile.advice[1]


def test_fp32_rate_comes_from_the_roofline_counters():
    top = _profile("softmax-04_online-square_8k.csv").kernels[0]
    assert top.fp32_gflops == pytest.approx((18.0 + 12.0 + 2 * 95.0) * 1.755e9 / 1e9)


@pytest.mark.parametrize(
    ("printed", "reason"),
    [
        (
            "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
            "Counters on the target device 0.",
            "NVreg_RestrictProfilingToAdminUsers=0",
        ),
        ("==ERROR== Failed to initialize the profiler: LibraryNotLoaded", "could not start its profiler"),
        ("==ERROR== Failed to connect to the target application", "loopback"),
        ("==WARNING== No kernels were profiled.", "profiled no kernel"),
    ],
)
def test_ncu_failures_are_explained(printed, reason):
    assert reason in ncu.diagnose(printed, 1)
    assert printed in ncu.error_lines("noise\n" + printed)


def test_sol_is_the_larger_fraction_of_the_roofs():
    assert roofline.sol_from_fractions({"bandwidth": 0.8, "flops": 0.1, "sgemm": 0.2}) == 0.8
    assert roofline.sol_from_fractions({"bandwidth": 0.01, "flops": 0.9, "sgemm": 0.7}) == 0.7
    assert roofline.sol_from_fractions({"bandwidth": None, "flops": None, "sgemm": None}) is None
    assert roofline.sol_score([0.5, 0.125]) == pytest.approx(0.25)
    assert roofline.sol_score([0.5, None]) is None
    assert roofline.roofline_s(2e12, 3e12, H100) == pytest.approx(1.0)
    assert roofline.bound_by(2e12, 3e12, H100) == "memory"
    recovered = roofline.ceilings_from_result(1000.0, 1500.0, {"bandwidth": 0.5, "flops": 0.1, "sgemm": None})
    assert recovered.copy_bytes_s == pytest.approx(3e12) and recovered.fp32_flops_s == pytest.approx(1e13)


def test_the_profiled_request_is_one_call_of_the_benchmark():
    from grader.profile import capture

    problem = load_problem("softmax")
    text = capture.request_text(problem, session.benchmark(problem, "square_8k"), 0xABC)
    assert "case square_8k check abc 1" in text.splitlines()
    assert sum(line.startswith("case ") for line in text.splitlines()) == 1


def test_stalls_and_scattered_loads_from_other_metric_names():
    launch = parse.Launch(
        id=0,
        name="k(float *)",
        grid="(1024, 1, 1)",
        metrics={
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard": 900.0,
            "smsp__pcsamp_warps_issue_stalled_long_scoreboard_not_issued": 5.0,
            "smsp__pcsamp_warps_issue_stalled_barrier": 100.0,
            "smsp__pcsamp_warps_issue_stalled_selected": 400.0,
            "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 3200.0,
            "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": 100.0,
            "gpu__time_duration.sum": 1e-3,
            "dram__bytes.sum.per_second": 1e12,
        },
    )
    k = summary.kernel(launch, H100)
    assert [(s.reason, s.share) for s in k.stalls] == [("long_scoreboard", 0.9), ("barrier", 0.1)]
    assert k.stalls[0].metric == "smsp__pcsamp_warps_issue_stalled_long_scoreboard"
    assert k.dram_bytes == pytest.approx(1e9)
    assert k.global_load_sectors_per_request == 32
    assert any("touches 32 32-byte sectors" in sentence for sentence in k.advice)


def test_a_recorded_h100_profile_reads_as_ncu_measured_it():
    """ncu 2025.3 on the H100 (tests/fixtures/profile/README.md): matmul's naive rung, one call of square_4k;
    ncu's own gpu__time_duration.sum for it is 22,916,032 ns."""
    problem = load_problem("matmul")
    size_set = session.benchmark(problem, "square_4k")
    csv_text = (FIXTURES / "recorded-h100-matmul-01_naive-square_4k.csv").read_text()
    profile = session.from_csv(problem, size_set, csv_text, H100, device="NVIDIA H100 80GB HBM3")
    data = json.loads(profile.model_dump_json())
    assert Profile.model_validate(data, strict=False).model_dump(mode="json") == data
    (kernel,) = profile.kernels
    assert kernel.name.startswith("matmul_naive")
    assert kernel.duration_us == pytest.approx(22916.032)
    assert kernel.dram_gbps == pytest.approx(643.51, rel=1e-3)


def test_advice_quotes_no_load_width_that_no_load_has():
    """The H100's naive transpose (grader profile --json, recorded): ncu's averages give 0.89 useful bytes per
    load (4 sectors a request, 22% of each used), which is no instruction's width; the advice says what is
    known, the sector efficiency, and no "1-byte" loads."""
    from grader.profile import advice

    recorded = Profile.model_validate_json((FIXTURES / "recorded-h100-matrix-transpose-01_naive.json").read_text())
    naive = recorded.kernels[0]
    assert naive.global_load_bytes_per_instruction == pytest.approx(0.889, abs=1e-3)
    said = " ".join(advice.for_kernel(naive))
    assert "global loads are 22% sector-efficient" in said
    assert "-byte" not in said.split("sector")[0]


def _recorded(name: str) -> Profile:
    return Profile.model_validate_json((FIXTURES / f"recorded-h100-{name}.json").read_text())


def test_a_grid_one_wave_short_of_the_sms_is_not_called_idle():
    """attention's top rung on the H100 (83% of its speed of light): 128 blocks for 132 SMs leave 3% of the GPU
    idle, which is not worth a learner's time; the advice used to say "most of the GPU is idle" there."""
    from grader.profile import advice

    flash = _recorded("attention-03_flash_split_kv").kernels[0]
    assert flash.grid == "(16, 8, 1)"
    said = " ".join(advice.for_kernel(flash))
    assert "the grid" not in said and "idle" not in said
    assert "the grid has 64 blocks for 132 SMs: most of the GPU is idle" in " ".join(
        advice.for_kernel(flash.model_copy(update={"grid": "(8, 8, 1)"}))
    )
    assert "the grid has 100 blocks for 132 SMs: 32 SMs get no block" in " ".join(
        advice.for_kernel(flash.model_copy(update={"grid": "(100, 1, 1)"}))
    )


def test_a_kernel_on_tensor_cores_is_not_told_to_use_them_and_a_scalar_one_is():
    """gemm-fp16 on the H100: the wgmma rung (tensor pipe 86%) was told "FP32 at 0% of the FMA ceiling: use
    tensor cores"; the naive rung (tensor pipe 0%) must still be."""
    from grader.profile import advice

    wgmma = _recorded("gemm-fp16-05_wgmma_cluster_multicast").kernels[0]
    assert wgmma.tensor_pipe_pct == pytest.approx(85.97)
    said = " ".join(advice.for_kernel(wgmma))
    assert "use tensor cores" not in said
    assert "the tensor cores at 86% of theirs" in said
    naive = _recorded("gemm-fp16-01_naive").kernels[0]
    assert naive.tensor_pipe_pct == 0.0
    assert "FP32 at 9% of the FMA ceiling: use tensor cores (mma or wgmma" in " ".join(advice.for_kernel(naive))


def test_a_call_near_its_roofline_is_told_little_is_left_to_gain():
    from grader.profile import advice

    top = _profile("softmax-04_online-square_8k.csv")
    assert advice.for_call(top)[0].endswith("near the roofline, little is left to gain")
    naive = _profile("softmax-01_naive-square_8k.csv")
    assert "little is left" not in " ".join(advice.for_call(naive))
