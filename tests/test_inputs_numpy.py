"""The CPU's input generator (numpy uint32 ops) gives the same bits as the GPU's (int64 torch ops) and as the
C++ generator the supervisor runs (grader/boundary/generator.h), for many seeds, sizes and ranges (the
numpy path takes a quarter of the CPU time)."""

from __future__ import annotations

import random
import shutil
import subprocess

import numpy as np
import pytest
import torch

from grader.run import binaries
from grader.run import inputs as gen

SIZES = [0, 1, 2, 7, 255, 256, 257, 4099, 65539]
RANGES = [(-1.0, 1.0), (-6.0, 6.0), (-30.0, 30.0), (0.0, 1.0), (1e-3, 2e-3), (-1e4, 3.5e4), (-1e30, 1e30)]
EDGE_SEEDS = [0, 1, gen.MASK32, gen.MASK32 + 1, 1 << 63, gen.MASK64, 0xDEADBEEF_00000000, 0x00000000_DEADBEEF]


def seeds(count: int) -> list[int]:
    """Edge seeds, then tensor seeds as grading derives them, then random 64-bit words (a fixed stream)."""
    draw = random.Random(13)
    derived = [gen.tensor_seed(draw.getrandbits(64), call, param) for call in range(3) for param in range(3)]
    return EDGE_SEEDS + derived + [draw.getrandbits(64) for _ in range(count)]


def bits(values: np.ndarray | torch.Tensor) -> np.ndarray:
    array = values.numpy() if isinstance(values, torch.Tensor) else values
    return array.view(np.uint32)


@pytest.mark.parametrize("low, high", RANGES)
def test_numpy_and_torch_give_the_same_bits(low, high):
    for seed in seeds(40):
        for count in SIZES:
            got = gen.uniform_numpy(seed, count, low, high)
            expected = gen.uniform_torch(seed, count, low, high, "cpu")
            assert got.dtype == np.float32 and got.shape == (count,)
            assert np.array_equal(bits(got), bits(expected)), (hex(seed), count, low, high)


def test_a_million_elements_agree_bit_for_bit():
    """Large counters: every bit of the index reaches the hash."""
    for seed in seeds(2)[-4:]:
        got = gen.uniform_numpy(seed, 1 << 20, -1.0, 1.0)
        assert np.array_equal(bits(got), bits(gen.uniform_torch(seed, 1 << 20, -1.0, 1.0, "cpu")))


def test_uniform_takes_the_numpy_path_on_the_cpu():
    seed = seeds(1)[-1]
    on_cpu = gen.uniform(seed, 1001, -1.0, 1.0, torch.device("cpu"))
    assert on_cpu.dtype == torch.float32 and on_cpu.device.type == "cpu"
    assert np.array_equal(bits(on_cpu), bits(gen.uniform_numpy(seed, 1001, -1.0, 1.0)))
    assert float(on_cpu.min()) >= -1.0 and float(on_cpu.max()) < 1.0


GENERATOR_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "generator.h"
int main(int argc, char** argv) {
    uint64_t seed = std::strtoull(argv[1], nullptr, 0);
    size_t n = std::strtoull(argv[2], nullptr, 0);
    uint32_t low = std::strtoul(argv[3], nullptr, 0), scale = std::strtoul(argv[4], nullptr, 0);
    std::vector<float> out(n);
    kjg::fill(kjg::Dtype::F32, out.data(), n, seed, low, scale);
    std::fwrite(out.data(), sizeof(float), n, stdout);
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_numpy_matches_the_supervisors_cpp_generator(tmp_path):
    source = tmp_path / "fill.cpp"
    source.write_text(GENERATOR_MAIN)
    header = str(binaries.BOUNDARY_SOURCES)
    program = tmp_path / "fill"
    build = ["g++", "-O2", "-ffp-contract=off", "-std=c++17", "-I", header, str(source), "-o", str(program)]
    subprocess.run(build, check=True, capture_output=True)
    for seed in seeds(6)[::3]:
        for low, high in RANGES:
            count = 4099
            low_and_scale = (gen.float32_bits(low), gen.float32_bits(high - low))  # as grader/run/request.py sends them
            argv = [str(program), str(seed), str(count), *map(str, low_and_scale)]
            written = np.frombuffer(subprocess.run(argv, check=True, capture_output=True).stdout, dtype=np.uint32)
            assert np.array_equal(written, bits(gen.uniform_numpy(seed, count, low, high))), (hex(seed), low, high)


# --- every element type: the C++ generator, numpy and torch write the same bits ---------------------------

TYPED_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include "generator.h"
int main(int argc, char** argv) {
    kjg::Dtype d;
    if (!kjg::parse_dtype(argv[1], &d)) return 2;
    uint64_t seed = std::strtoull(argv[2], nullptr, 0);
    size_t n = std::strtoull(argv[3], nullptr, 0);
    uint32_t low = std::strtoul(argv[4], nullptr, 0), scale = std::strtoul(argv[5], nullptr, 0);
    std::vector<unsigned char> out(n * kjg::element_bytes(d) + 1);
    if (std::string(argv[6]) == "poison")
        kjg::poison(d, out.data(), n);
    else
        kjg::fill(d, out.data(), n, seed, low, scale);
    std::fwrite(out.data(), 1, n * kjg::element_bytes(d), stdout);
}
"""

CONVERT_MAIN = r"""
#include <cstdio>
#include <vector>
#include "generator.h"
int main() {
    std::vector<uint32_t> in(1 << 20);
    size_t n = std::fread(in.data(), 4, in.size(), stdin);
    std::vector<uint16_t> out(3 * n);
    for (size_t i = 0; i < n; ++i) out[i] = kjg::f32_to_f16_bits(in[i]), out[n + i] = kjg::f32_to_bf16_bits(in[i]);
    for (size_t i = 0; i < n; ++i) out[2 * n + i] = kjg::f32_to_e4m3_bits(in[i]);
    std::fwrite(out.data(), 2, out.size(), stdout);
}
"""

TYPED_RANGES = {
    "f32": [(-1.0, 1.0), (-1e30, 1e30)],
    "f16": [(-1.0, 1.0), (-6.0, 6.0), (-1e-4, 1e-4), (-65504.0, 65504.0), (1e-7, 3e-7)],
    "bf16": [(-1.0, 1.0), (-30.0, 30.0), (-1e30, 1e30), (1e-38, 3e-38)],
    "i32": [(0, 1), (0, 1000), (-5, 3), (-(2**31), 2**31 - 1), (100000, 100003)],
    "i8": [(0, 1), (-128, 128), (-127, 128), (-5, 3), (100, 101), (-128, -127)],
    # e4m3: ordinary, around the subnormals (2^-9 units, 2^-6 the smallest normal), to the largest (448)
    "e4m3": [(-1.0, 1.0), (-448.0, 448.0), (-0.02, 0.02), (1e-4, 3e-3), (-3.0, 6.0), (400.0, 448.0)],
}
POISONS = {
    "f32": (np.uint32, 0x7FC0FFEE),
    "f16": (np.uint16, 0x7FEE),
    "bf16": (np.uint16, 0x7FEE),
    "i32": (np.uint32, 0x7FC0FFEE),
    "i8": (np.uint8, 0x7F),  # input types only: a request naming such an output still stays within its bytes
    "e4m3": (np.uint8, 0x7F),
}


def compiled(tmp_path, name: str, source: str):
    path = tmp_path / f"{name}.cpp"
    path.write_text(source)
    header = str(binaries.BOUNDARY_SOURCES)
    program = tmp_path / name
    build = ["g++", "-O2", "-ffp-contract=off", "-std=c++17", "-I", header, str(path), "-o", str(program)]
    subprocess.run(build, check=True, capture_output=True)
    return program


def raw(values) -> bytes:
    if isinstance(values, torch.Tensor):
        values = values.view(torch.int16) if values.dtype == torch.bfloat16 else values
        values = values.view(torch.int8) if values.dtype == torch.float8_e4m3fn else values
        values = values.numpy()
    return values.tobytes()


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
@pytest.mark.parametrize("dtype", gen.DTYPES)
def test_every_dtype_cpp_numpy_and_torch_agree(dtype, tmp_path):
    program = compiled(tmp_path, "typed", TYPED_MAIN)
    for seed in seeds(4)[::3]:
        for low, high in TYPED_RANGES[dtype]:
            count = 4099
            low_bits, scale_bits = gen.bounds_bits(dtype, low, high)  # as grader/run/request.py sends them
            argv = [str(program), dtype, str(seed), str(count), str(low_bits), str(scale_bits), "fill"]
            written = subprocess.run(argv, check=True, capture_output=True).stdout
            numpy_values = gen.generate_numpy(dtype, seed, count, low, high)
            assert written == numpy_values.tobytes(), (dtype, hex(seed), low, high)
            assert written == raw(gen.generate_torch(dtype, seed, count, low, high, "cpu")), (
                dtype,
                hex(seed),
                low,
                high,
            )
            assert written == raw(gen.generate(dtype, seed, count, low, high)), (dtype, hex(seed), low, high)
    word, poison = POISONS[dtype]
    argv = [str(program), dtype, "0", "5", "0", "0", "poison"]
    written = np.frombuffer(subprocess.run(argv, check=True, capture_output=True).stdout, dtype=word)
    assert written.tolist() == [poison] * 5


def test_integers_stay_in_their_range_and_use_all_of_it():
    values = gen.generate("i32", 77, 100000, 0, 10)
    assert values.dtype == torch.int32
    assert sorted(set(values.tolist())) == list(range(10))
    wide = gen.generate("i32", 78, 100000, -(2**31), 2**31 - 1)
    assert int(wide.min()) < -(2**30) and int(wide.max()) > 2**30


def test_half_values_are_the_float32_values_rounded_to_nearest():
    f32 = gen.generate("f32", 5, 10000, -3.0, 3.0)
    assert torch.equal(gen.generate("f16", 5, 10000, -3.0, 3.0), f32.to(torch.float16))
    assert torch.equal(gen.generate("bf16", 5, 10000, -3.0, 3.0), f32.to(torch.bfloat16))


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_cpp_rounding_to_half_and_bfloat16_matches_numpy_and_torch_bit_for_bit(tmp_path):
    """Every class of float32: zeros, subnormals of either type, ties, the largest halves, Inf and NaN."""
    draw = np.random.default_rng(3)
    edges = [0, 0x80000000, 0x33000000, 0x33000001, 0x337FFFFF, 0x38800000, 0x387FFFFF, 0x477FEFFF, 0x477FF000]
    edges += [0x7F800000, 0xFF800000, 0x7F7FFFFF, 0x3F801000, 0x3F803000, 0x3F808000, 0x3F818000, 0x00000001]
    ties = (draw.integers(0, 1 << 32, 1 << 16, dtype=np.uint64).astype(np.uint32) & np.uint32(0xFFFFE000)) | np.uint32(
        0x1000
    )
    small = draw.integers(0x30000000, 0x39000000, 1 << 16, dtype=np.uint64).astype(np.uint32)
    anything = draw.integers(0, 1 << 32, (1 << 20) - (1 << 17) - len(edges), dtype=np.uint64).astype(np.uint32)
    bits_in = np.concatenate([np.array(edges, dtype=np.uint32), ties, small, anything])
    program = compiled(tmp_path, "convert", CONVERT_MAIN)
    out = np.frombuffer(
        subprocess.run([str(program)], input=bits_in.tobytes(), check=True, capture_output=True).stdout, dtype=np.uint16
    )
    half, bf16 = out[: len(bits_in)], out[len(bits_in) : 2 * len(bits_in)]
    values = bits_in.view(np.float32)
    finite = np.isfinite(values)
    with np.errstate(over="ignore"):
        expected_half = values.astype(np.float16).view(np.uint16)
    assert np.array_equal(half[finite], expected_half[finite])
    assert np.all(np.isnan(half[~np.isfinite(values) & np.isnan(values)].view(np.float16)))
    expected_bf16 = torch.from_numpy(values[finite]).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(bf16[finite], expected_bf16)
    assert np.array_equal(gen.bf16_bits_numpy(values[finite]), expected_bf16)


@pytest.mark.skipif(shutil.which("g++") is None, reason="no g++")
def test_cpp_rounding_to_fp8_e4m3_matches_numpy_and_torch_bit_for_bit(tmp_path):
    """Every class of float32 against E4M3: zeros, values that round to zero, each subnormal and its ties, the
    smallest normal, ties between normals, 448 and what saturates to it (torch after a clamp, as generate_torch)."""
    draw = np.random.default_rng(4)
    # 2^-10 (ties to 0), 2^-10 + ulp, 3*2^-10 (ties up to 2*2^-9), 2^-6 - ulp, 2^-6, 1.0625 (tie, stays 1), 1.1875 (tie,
    # up to 1.25), 448, 464 (tie; saturates), 465, the largest float, Inf, NaN, denormal floats
    edges = [0, 0x80000000, 0x3A800000, 0x3A800001, 0x3B400000, 0x3C7FFFFF, 0x3C800000, 0x3F880000, 0x3F980000]
    edges += [0x43E00000, 0x43E80000, 0x43E80001, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0x00000001]
    ties = draw.integers(0x3A000000, 0x44000000, 1 << 15, dtype=np.uint64).astype(np.uint32) & np.uint32(0xFFF00000)
    ties |= np.uint32(0x80000)
    signs = draw.integers(0, 2, 1 << 15, dtype=np.uint64).astype(np.uint32) << np.uint32(31)
    small = draw.integers(0x39000000, 0x3D000000, 1 << 16, dtype=np.uint64).astype(np.uint32)
    anything = draw.integers(0, 1 << 32, (1 << 18) - len(edges), dtype=np.uint64).astype(np.uint32)
    bits_in = np.concatenate([np.array(edges, dtype=np.uint32), ties | signs, small, anything])
    program = compiled(tmp_path, "convert", CONVERT_MAIN)
    out = np.frombuffer(
        subprocess.run([str(program)], input=bits_in.tobytes(), check=True, capture_output=True).stdout, dtype=np.uint16
    )
    e4m3 = out[2 * len(bits_in) :].astype(np.uint8)
    values = bits_in.view(np.float32)
    assert np.array_equal(e4m3, gen.e4m3_bits_numpy(values))
    nan = np.isnan(values)
    assert np.all(e4m3[nan] & 0x7F == 0x7F)
    clamped = torch.from_numpy(values[~nan]).clamp(-gen.E4M3_MAX, gen.E4M3_MAX)
    assert np.array_equal(e4m3[~nan], clamped.to(torch.float8_e4m3fn).view(torch.uint8).numpy())
    assert e4m3[:9].tolist() == [0x00, 0x80, 0x00, 0x01, 0x02, 0x08, 0x08, 0x38, 0x3A]
    assert e4m3[9:15].tolist() == [0x7E, 0x7E, 0x7E, 0x7E, 0x7E, 0xFE]


def test_fp8_and_int8_inputs_keep_to_their_types():
    """e4m3 values are whole E4M3 numbers within +-448 and never NaN; int8 values fill [low, high) and no more."""
    wide = gen.generate("e4m3", 91, 100000, -448.0, 448.0)
    assert wide.dtype == torch.float8_e4m3fn
    as_float = wide.float()
    assert not bool(as_float.isnan().any()) and float(as_float.abs().max()) == 448.0
    small = gen.generate("e4m3", 92, 100000, -0.02, 0.02).float()
    assert float(small.abs().min()) == 0.0 and 2.0**-9 in set(small.abs().tolist())  # subnormals are drawn
    values = gen.generate("i8", 93, 100000, -128, 128)
    assert values.dtype == torch.int8 and sorted(set(values.tolist())) == list(range(-128, 128))
    assert set(gen.generate("i8", 94, 1000, -3, 2).tolist()) == {-3, -2, -1, 0, 1}


DEVICE_MAIN = r"""
#include "generator.h"
__global__ void fill_all(void* f32, void* f16, void* bf16, void* i32, void* i8, void* e4m3, size_t n, uint64_t seed) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    kjg::write_element(kjg::Dtype::F32, f32, i, seed, 0xBF800000u, 0x40000000u);
    kjg::write_element(kjg::Dtype::F16, f16, i, seed, 0xBF800000u, 0x40000000u);
    kjg::write_element(kjg::Dtype::BF16, bf16, i, seed, 0xBF800000u, 0x40000000u);
    kjg::write_element(kjg::Dtype::I32, i32, i, seed, 0u, 1000u);
    kjg::write_element(kjg::Dtype::I8, i8, i, seed, 0xFFFFFF80u, 256u);
    kjg::write_element(kjg::Dtype::E4M3, e4m3, i, seed, 0xBF800000u, 0x40000000u);
    kjg::write_poison(kjg::Dtype::F16, f16, i + n);
    (void)kjg::element_bytes(kjg::Dtype::BF16);
}
"""


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_the_generator_compiles_as_device_code(tmp_path):
    """The CUDA supervisor calls write_element and write_poison in a kernel: no host-only call on that path."""
    source = tmp_path / "device.cu"
    source.write_text(DEVICE_MAIN)
    header = str(binaries.BOUNDARY_SOURCES)
    build = ["nvcc", "-std=c++17", "-arch=sm_90a", "-I", header, "-c", str(source), "-o", str(tmp_path / "device.o")]
    result = subprocess.run(build, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", gen.DTYPES)
def test_every_dtype_on_the_gpu_matches_numpy(dtype):
    """The checker regenerates inputs on the GPU (torch ops) when there is one: the same bits as numpy's."""
    for seed in seeds(4)[::3]:
        for low, high in TYPED_RANGES[dtype]:
            on_gpu = gen.generate(dtype, seed, 65539, low, high, "cuda").cpu()
            assert raw(on_gpu) == gen.generate_numpy(dtype, seed, 65539, low, high).tobytes(), (dtype, hex(seed))
