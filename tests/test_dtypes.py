"""Buffers of every element type (float32, float16, bfloat16, int32; int8 and fp8 e4m3 inputs), end to end on the CPU track: the spec, the
starter, the shim, the supervisor's inputs and poison, the in-process harness, and the checker's verdicts."""

from __future__ import annotations

import re
import shutil
import subprocess
import textwrap

import numpy as np
import pytest
import torch

from grader.build import runner as harness_build
from grader.judge import check, pipeline
from grader.problems import dtypes, starter
from grader.problems.catalog import load_problem
from grader.problems.spec import SpecError
from grader.run import inputs as gen
from grader.run import request
from grader.verdict.status import Status

SPEC = """\
title: Typed copy
difficulty: easy
signature:
  - {name: a, type: "const float*", shape: [N]}
  - {name: h, type: "const __half*", shape: [N]}
  - {name: b, type: "const __nv_bfloat16*", shape: [N]}
  - {name: k, type: "const int*", shape: [N]}
  - {name: q, type: "const int8_t*", shape: [N]}
  - {name: f8, type: "const __nv_fp8_e4m3*", shape: [N]}
  - {name: out_h, type: "__half*", shape: [N]}
  - {name: out_b, type: "__nv_bfloat16*", shape: [N]}
  - {name: out_k, type: "int*", shape: [N]}
  - {name: total, type: "float*", shape: [N]}
  - {name: N, type: int}
constraints: ["1 <= N"]
accumulation: "out_h = h, out_b = 2 b and out_k = k + 1 exactly; total = a + h + b + k + q + f8 in float32"
inputs:
  h: {low: -100.0, high: 100.0}
  k: {low: -5, high: "N"}
  q: {low: -128, high: 128}
  f8: {low: -8.0, high: 8.0}
tolerance: {atol: 1e-4, rtol: 1e-6, why: "copies are exact; one float32 sum of four terms"}
flops: "4 * N"
bytes: "24 * N"
tests:
  - {name: one, sizes: {N: 1}}
  - {name: odd, sizes: {N: 1001}}
benchmarks: {}
"""

REFERENCE = '''"""Typed copy."""

import torch


def reference(a, h, b, k, q, f8, N):
    return h, 2 * b, k + 1, a + h + b + k + q + f8


def baseline(a, h, b, k, q, f8, N):
    return reference(a, h, b, k, q, f8, N)


def null_answers(a, h, b, k, q, f8, N):
    return {"zeros": torch.zeros_like(a)}
'''

CPU_SOLUTION = (
    """
#include <cstdint>
#include <cstring>
"""
    + dtypes.CPU_FP8_HELPERS  # the starter's e4m3 helpers, judged here against the checker's values
    + """
static float bf(uint16_t x) { uint32_t u = (uint32_t)x << 16; float f; std::memcpy(&f, &u, 4); return f; }
static float hf(uint16_t x);
void solve(const float* a, const uint16_t* h, const uint16_t* b, const int* k, const int8_t* q, const uint8_t* f8,
           uint16_t* out_h, uint16_t* out_b, int* out_k, float* total, int N) {
    for (int i = 0; i < N; ++i) {
        out_h[i] = h[i];
        out_b[i] = (uint16_t)(b[i] + (1 << 7));  // 2b: one more in the exponent (no b is 0 or subnormal here)
        if (WRITE_K) out_k[i] = k[i] + 1;
        total[i] = a[i] + hf(h[i]) + bf(b[i]) + (float)k[i] + (float)q[i] + e4m3_to_float(f8[i]);
    }
}
static float hf(uint16_t x) {
    uint32_t sign = (uint32_t)(x & 0x8000) << 16, e = (x >> 10) & 0x1F, m = x & 0x3FF, bits;
    if (e == 0) { if (!m) bits = sign; else { e = 113; while (!(m & 0x400)) m <<= 1, --e; bits = sign | (e << 23) | ((m & 0x3FF) << 13); } }
    else bits = sign | ((e + 112) << 23) | (m << 13);
    float f; std::memcpy(&f, &bits, 4); return f;
}
"""
)


@pytest.fixture
def problem(tmp_path, monkeypatch):
    for name in ("DATA", "CACHE", "RUNS"):
        (tmp_path / name).mkdir()
        monkeypatch.setenv(f"KERNELJUDGE_{name}", str(tmp_path / name))
    folder = tmp_path / "typed-copy"
    folder.mkdir()
    (folder / "problem.yaml").write_text(SPEC)
    (folder / "statement.md").write_text("Copy typed buffers.\n")
    (folder / "reference.py").write_text(REFERENCE)
    return load_problem(folder)


def test_the_spec_knows_each_parameters_element_type_and_each_tracks_c_type(problem):
    assert [p.dtype for p in problem.pointer_params] == [
        *("f32", "f16", "bf16", "i32", "i8", "e4m3"),
        *("f16", "bf16", "i32", "f32"),
    ]
    assert [p.role for p in problem.pointer_params] == ["input"] * 6 + ["output"] * 4
    assert (
        "const __half* h, const __nv_bfloat16* b, const int* k, const int8_t* q, const __nv_fp8_e4m3* f8, __half* out_h"
        in problem.prototype()
    )
    cpu = problem.prototype(track="cpu")
    assert (
        "const uint16_t* h, const uint16_t* b, const int* k, const int8_t* q, const uint8_t* f8, uint16_t* out_h" in cpu
    )
    assert problem.bounds(problem.tests[1], "k") == (-5.0, 1001.0)


def test_the_request_names_every_type_and_its_bounds(problem):
    text = request.build(problem, "cpu", [request.Case("odd", problem.tests[1], "check", 7)])
    buffers = [line for line in text.splitlines() if line.startswith(("in ", "out "))]
    assert buffers[:6] == [
        f"in f32 1001 {gen.float32_bits(-1.0)} {gen.float32_bits(2.0)}",
        f"in f16 1001 {gen.float32_bits(-100.0)} {gen.float32_bits(200.0)}",
        f"in bf16 1001 {gen.float32_bits(-1.0)} {gen.float32_bits(2.0)}",
        f"in i32 1001 {(-5) & 0xFFFFFFFF} 1006",
        f"in i8 1001 {(-128) & 0xFFFFFFFF} 256",
        f"in e4m3 1001 {gen.float32_bits(-8.0)} {gen.float32_bits(16.0)}",
    ]
    assert buffers[6:] == ["out f16 1001", "out bf16 1001", "out i32 1001", "out f32 1001"]


def test_inputs_arrive_in_their_types_and_the_reference_gets_float64_and_int64(problem):
    arrays = check.make_inputs(problem, problem.tests[1], 3, 0)
    names = ("a", "h", "b", "k", "q", "f8")
    assert [arrays[n].dtype for n in names] == [
        *(torch.float32, torch.float16, torch.bfloat16, torch.int32),
        *(torch.int8, torch.float8_e4m3fn),
    ]
    assert int(arrays["k"].min()) >= -5 and int(arrays["k"].max()) < 1001
    assert int(arrays["q"].min()) == -128 and int(arrays["q"].max()) == 127
    inputs = check.reference_inputs(problem, problem.tests[1], arrays)
    assert [inputs[n].dtype for n in names] == [torch.float64] * 3 + [torch.int64] * 2 + [torch.float64]
    assert torch.equal(inputs["f8"], arrays["f8"].float().double().reshape(-1))


@pytest.mark.parametrize("track", ["cpu", "cuda"])
def test_the_starter_declares_each_tracks_types_and_compiles(problem, track, tmp_path):
    if track == "cuda" and not shutil.which("nvcc"):
        pytest.skip("no nvcc")
    source = starter.starter(problem, track)
    assert problem.prototype(track=track) in source
    if track == "cuda":
        assert "#include <cuda_fp16.h>" in source and "#include <cuda_bf16.h>" in source
        assert "#include <cuda_fp8.h>" in source
    else:
        assert "half_to_float" in source and "float_to_bf16" in source
        assert "e4m3_to_float" in source and "float_to_e4m3" in source
    path = tmp_path / ("starter.cu" if track == "cuda" else "starter.cpp")
    path.write_text(source)
    compiler = ["nvcc", "-arch=sm_90a"] if track == "cuda" else ["g++", "-std=c++17", "-fopenmp", "-Wall", "-Werror"]
    result = subprocess.run([*compiler, "-c", str(path), "-o", str(tmp_path / "s.o")], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_every_type_is_generated_poisoned_and_judged_on_the_cpu_track(problem):
    right = pipeline.grade(
        problem, CPU_SOLUTION.replace("WRITE_K", "1").encode(), "typed.cpp", track="cpu", mode="test"
    )
    assert right.status == Status.ACCEPTED, right.message
    wrong = pipeline.grade(
        problem, CPU_SOLUTION.replace("WRITE_K", "0").encode(), "typed.cpp", track="cpu", mode="test"
    )
    assert wrong.status == Status.WRONG_ANSWER
    # Every test leaves out_k unwritten; the message names the one furthest off, which the random inputs pick.
    assert re.search(r"out_k: (\d+) of \1 elements wrong: \1 never written, first at \[0\]", wrong.message)


def test_the_in_process_harness_runs_every_type(problem, tmp_path):
    """The profiler runs harness/runner.cpp: typed buffers, bit for bit the grader's inputs."""
    runner = tmp_path / "runner"
    shutil.copy(harness_build.build_runner("cpu"), runner)
    runner.chmod(0o755)
    library = tmp_path / "lib.so"
    shim = tmp_path / "shim.cpp"
    (tmp_path / "typed.cpp").write_text(CPU_SOLUTION.replace("WRITE_K", "1"))
    from grader.build.compiler import shim_source

    shim.write_text(shim_source(problem, "typed.cpp", "cpu"))
    subprocess.run(["g++", "-O2", "-std=c++17", "-shared", "-fPIC", str(shim), "-o", str(library)], check=True)
    out = tmp_path / "out"
    out.mkdir()
    text = request.build(problem, "cpu", [request.Case("odd", problem.tests[1], "check", 0xABC)])
    text = text.replace("library ./lib.so", f"library {library}").replace("outdir ./out", f"outdir {out}")
    subprocess.run([str(runner)], input=text.encode(), check=True, capture_output=True)
    got = check.read_call(problem, problem.tests[1], out, "odd.d1")
    assert got is not None
    assert [got[n].dtype for n in ("out_h", "out_b", "out_k")] == [np.float16, np.uint16, np.int32]
    expected = check.make_inputs(problem, problem.tests[1], 0xABC, 1)
    for index, param in enumerate(problem.pointer_params):
        if param.role == "input":
            count = int(np.prod(problem.shape(param, problem.tests[1].sizes)))
            kept = check.read_buffer(out / f"odd.d1.{index}.bin", count, param.dtype)
            assert kept is not None and kept.dtype == np.dtype(gen.NUMPY_DTYPES[param.dtype]), param.name
            generated = expected[param.name].cpu()
            as_bits = {1: torch.uint8, 2: torch.int16, 4: torch.int32}[generated.element_size()]
            assert kept.tobytes() == generated.view(as_bits).numpy().tobytes(), param.name
    reference = check.reference_outputs(problem, problem.tests[1], expected)
    for name in ("out_h", "out_b", "out_k", "total"):
        assert check.compare(got[name], reference[name], 1e-4, 1e-6).ok, name


def test_poison_of_each_type_reads_as_never_written():
    expected = torch.ones(3, dtype=torch.float64)
    for token, bits in check.POISONS.items():
        raw = np.full(3, bits, dtype=np.uint16 if token in ("f16", "bf16") else np.uint32)
        got = raw.view(gen.NUMPY_DTYPES[token])
        result = check.compare(got, expected, 0.0, 0.0)
        assert result.unwritten == 3 and "3 never written, first at [0]" in result.message, token
    right_poison = torch.full((2,), float(check.POISON_BITS), dtype=torch.float64)  # an int32 answer equal to it
    assert check.compare(np.full(2, check.POISON_BITS, np.uint32).view(np.int32), right_poison, 0, 0).ok


def test_bfloat16_and_half_outputs_are_compared_by_value():
    expected = torch.tensor([1.0, -2.5, 3.0e-3], dtype=torch.float64)
    half = expected.numpy().astype(np.float16)
    assert check.compare(half, expected, 0.0, 1e-3).ok
    bf16 = gen.bf16_bits_numpy(expected.numpy().astype(np.float32))
    assert check.compare(bf16, expected, 0.0, 4e-3).ok
    assert not check.compare(bf16, expected, 0.0, 1e-4).ok


@pytest.mark.parametrize(
    "change,message",
    [
        ({"h": {"low": -1e5, "high": 1.0}}, "exceed 65504"),
        ({"k": {"low": 0.5, "high": 3}}, "whole numbers"),
        ({"k": {"low": 0, "high": "N - 1"}}, "must be greater than low"),
        ({"q": {"low": -129, "high": 0}}, "leave int8"),
        ({"q": {"low": 0, "high": 129}}, "leave int8"),
        ({"f8": {"low": -500.0, "high": 1.0}}, "exceed 448"),
    ],
)
def test_bounds_a_type_cannot_hold_are_named(problem, tmp_path, change, message):
    spec = SPEC.replace('  h: {low: -100.0, high: 100.0}\n  k: {low: -5, high: "N"}\n', "")
    spec = spec.replace("  q: {low: -128, high: 128}\n  f8: {low: -8.0, high: 8.0}\n", "")
    spec = spec.replace("inputs:\n", "inputs:\n" + textwrap.indent(_yaml(change), "  "))
    (problem.folder / "problem.yaml").write_text(spec)
    with pytest.raises(SpecError, match=message):
        load_problem(problem.folder)


def test_a_16_bit_problem_must_state_its_accumulation(problem):
    (problem.folder / "problem.yaml").write_text(
        "\n".join(line for line in SPEC.splitlines() if not line.startswith("accumulation"))
    )
    with pytest.raises(SpecError, match="accumulation"):
        load_problem(problem.folder)


@pytest.mark.parametrize("output", ['"int8_t*"', '"__nv_fp8_e4m3*"'])
def test_int8_and_fp8_outputs_are_refused_by_name(problem, output):
    """No bit pattern of theirs is a poison arithmetic cannot make: an unwritten element would pass unseen."""
    (problem.folder / "problem.yaml").write_text(
        SPEC.replace('type: "float*", shape: [N]}', f"type: {output}, shape: [N]}}")
    )
    with pytest.raises(SpecError, match="inputs only"):
        load_problem(problem.folder)


def test_an_8_bit_problem_must_state_its_accumulation_and_quadruples_the_tensor_rate(problem):
    assert problem.tensor_rate == 4
    spec = "\n".join(line for line in SPEC.splitlines() if not line.startswith("accumulation"))
    spec = spec.replace('  - {name: h, type: "const __half*", shape: [N]}\n', "")
    (problem.folder / "problem.yaml").write_text(spec)
    with pytest.raises(SpecError, match="accumulation"):
        load_problem(problem.folder)


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_the_starters_fp8_helpers_agree_with_torch_on_every_byte_and_round_as_the_generator(tmp_path):
    """e4m3_to_float on all 256 bytes is torch's float8_e4m3fn value (NaN for 0x7F, 0xFF); float_to_e4m3 is the
    generator's rounding (nearest, ties to even, saturating to 448)."""
    source = tmp_path / "fp8.cpp"
    source.write_text(
        "#include <cstdint>\n#include <cstdio>\n#include <cstring>\n"
        + dtypes.CPU_FP8_HELPERS
        + """
int main() {
    float decoded[256];
    for (int b = 0; b < 256; ++b) decoded[b] = e4m3_to_float((uint8_t)b);
    std::fwrite(decoded, 4, 256, stdout);
    float f;
    while (std::fread(&f, 4, 1, stdin) == 1) { uint8_t e = float_to_e4m3(f); std::fwrite(&e, 1, 1, stdout); }
}
"""
    )
    subprocess.run(["g++", "-O2", "-std=c++17", str(source), "-o", str(tmp_path / "fp8")], check=True)
    values = np.concatenate(
        [
            np.random.default_rng(5).standard_normal(1 << 16).astype(np.float32) * np.float32(50),
            [448, 464, -1e9, 2**-10],
        ]
    ).astype(np.float32)
    out = subprocess.run([str(tmp_path / "fp8")], input=values.tobytes(), check=True, capture_output=True).stdout
    decoded = np.frombuffer(out[:1024], dtype=np.float32)
    expected = torch.arange(256, dtype=torch.int32).to(torch.uint8).view(torch.float8_e4m3fn).float().numpy()
    assert np.array_equal(decoded, expected, equal_nan=True) and np.isnan(decoded[[0x7F, 0xFF]]).all()
    assert np.array_equal(np.frombuffer(out[1024:], dtype=np.uint8), gen.e4m3_bits_numpy(values))


def _yaml(change: dict) -> str:
    import yaml

    return yaml.safe_dump(change, default_flow_style=None)


@pytest.mark.parametrize("dtype", gen.DTYPES)
@pytest.mark.parametrize("path", ["numpy", "torch"])
def test_any_part_of_an_input_is_made_with_the_bits_of_the_whole(dtype, path):
    """An audit makes only its drawn rows' inputs: each element must hold what the whole buffer holds there."""
    low, high = (-7, 300) if dtype in gen.INTEGER_DTYPES else (-3.0, 5.0)
    count, seed = 10_007, 0x1234_5678_9ABC_DEF0
    index = torch.tensor([0, 1, 9_999, 17, 10_006, 5_000, 17], dtype=torch.int64)
    make = gen.generate if path == "numpy" else gen.generate_torch  # generate takes numpy's path on the CPU
    whole, part = make(dtype, seed, count, low, high, "cpu"), make(dtype, seed, count, low, high, "cpu", index)
    width = torch.int8 if whole.element_size() == 1 else torch.int16 if whole.element_size() == 2 else torch.int32
    assert torch.equal(part.view(width), whole.view(width)[index])
