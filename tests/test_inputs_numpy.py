"""The CPU's input generator (numpy uint32 ops) gives the same bits as the GPU's (int64 torch ops) and as the
C++ generator the supervisor runs (grader/run/generator.h), for many seeds, sizes and ranges (issue 13: the
numpy path takes a quarter of the CPU time)."""

from __future__ import annotations

import random
import shutil
import subprocess

import numpy as np
import pytest
import torch

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
    header = gen.__file__.replace("inputs.py", "")
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
