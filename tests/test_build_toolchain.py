"""The CUDA architecture submissions are compiled for: the GPU's own feature set (sm_90a on compute capability
9.0, sm_100a on 10.0, else plain sm_XY), said in every verdict's toolchain; and that wgmma then assembles."""

from __future__ import annotations

import dataclasses
import subprocess

import pytest

from grader import tracks
from grader.build import compiler, runner
from grader.toolchain import Gpu, Toolchain, detect


def tools(capability: str | None) -> Toolchain:
    gpu = Gpu("a GPU", capability, "580.0", 80000) if capability else None
    return Toolchain("/usr/local/cuda/bin/nvcc", "Cuda compilation tools, release 13.0", "g++", "g++ 12", gpu, "a CPU")


@pytest.mark.parametrize(
    ("capability", "arch"), [("9.0", "sm_90a"), ("10.0", "sm_100a"), ("8.9", "sm_89"), ("12.0", "sm_120")]
)
def test_the_arch_is_the_gpus_own_feature_set(capability, arch):
    found = tools(capability)
    assert found.cuda_arch == arch
    assert tracks.get("cuda").toolchain(found) == f"Cuda compilation tools, release 13.0, -arch={arch}"
    flags = compiler.submission_flags("cuda", found)
    number = arch[3:]
    wanted = (
        f"-gencode=arch=compute_{number},code=[sm_{number},compute_{number}]" if arch.endswith("a") else f"-arch={arch}"
    )
    assert wanted in flags and wanted in runner.runner_flags("cuda", found)


def test_without_a_gpu_the_setting_decides_and_defaults_to_sm_90a(monkeypatch):
    monkeypatch.delenv("KERNELJUDGE_CUDA_ARCH", raising=False)
    assert tools(None).cuda_arch == "sm_90a"
    monkeypatch.setenv("KERNELJUDGE_CUDA_ARCH", "sm_80")
    assert tools(None).cuda_arch == "sm_80" and "-arch=sm_80" in tools(None).arch_flags


@pytest.mark.skipif(not detect().nvcc, reason="no nvcc here")
def test_wgmma_assembles_with_the_flags_for_an_h100(tmp_path):
    source = tmp_path / "wgmma.cu"
    source.write_text('__global__ void k() { asm volatile("wgmma.fence.sync.aligned;"); }\n')
    nvcc = dataclasses.replace(tools("9.0"), nvcc=detect().nvcc)
    flags = compiler.submission_flags("cuda", nvcc)
    built = subprocess.run([*flags, "-o", str(tmp_path / "k.so"), str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    plain = subprocess.run(
        [nvcc.nvcc, "-arch=sm_90", "-c", str(source), "-o", str(tmp_path / "k.o")], capture_output=True
    )
    assert plain.returncode != 0  # the plain arch has no wgmma: the test can tell the difference
