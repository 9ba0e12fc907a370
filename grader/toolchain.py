"""What this machine offers: nvcc, g++, the GPU (through nvidia-smi) and their versions, found once."""

from __future__ import annotations

import functools
import platform
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from grader import settings

FEATURE_SPECIFIC = ("9.0", "10.0")  # compute capabilities compiled for their arch-specific features (sm_XYa)


@dataclass(frozen=True)
class Gpu:
    name: str
    compute_capability: str  # "9.0"
    driver: str
    memory_mib: int

    @property
    def arch(self) -> str:
        """The -arch for this GPU's own feature set: sm_90a on compute capability 9.0 (H100, H200), sm_100a on
        10.0 (B200), so that wgmma, TMA and tcgen05 can be used; else plain sm_XY."""
        plain = "sm_" + self.compute_capability.replace(".", "")
        return plain + "a" if self.compute_capability in FEATURE_SPECIFIC else plain


@dataclass(frozen=True)
class Toolchain:
    nvcc: str | None
    nvcc_version: str
    gxx: str | None
    gxx_version: str
    gpu: Gpu | None
    cpu_model: str

    @property
    def cuda_arch(self) -> str:
        """The -arch CUDA code is compiled for: the visible GPU's, else $KERNELJUDGE_CUDA_ARCH."""
        return self.gpu.arch if self.gpu else settings.CUDA_ARCH.get()

    @property
    def arch_flags(self) -> list[str]:
        """nvcc's flags for `cuda_arch`. An arch-specific one (sm_90a) as one -gencode, cubin and PTX of that
        feature set only: nvcc 13's `-arch=sm_90a` also emits plain compute_90 PTX, in which wgmma does not
        assemble, so a kernel using it would have to guard it with __CUDA_ARCH_FEAT_SM90_ALL."""
        arch = self.cuda_arch
        if arch.startswith("sm_") and arch.endswith("a"):
            number = arch[3:]
            return [f"-gencode=arch=compute_{number},code=[sm_{number},compute_{number}]"]
        return [f"-arch={arch}"]

    @property
    def cuda_lib_dir(self) -> str:
        return str(Path(self.nvcc).resolve().parent.parent / "lib64") if self.nvcc else ""


def _first_line(argv: list[str], containing: str = "") -> str:
    """The first line of the command's output (that contains `containing`, else its last line)."""
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError):
        return ""
    if containing:
        return next((line for line in out if containing in line), out[-1] if out else "")
    return out[0] if out else ""


def _find_nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found:
        return found
    default = Path("/usr/local/cuda/bin/nvcc")
    return str(default) if default.exists() else None


def _find_gpu() -> Gpu | None:
    if not shutil.which("nvidia-smi"):
        return None
    line = _first_line(
        ["nvidia-smi", "--query-gpu=name,compute_cap,driver_version,memory.total", "--format=csv,noheader,nounits"]
    )
    parts = [p.strip() for p in line.split(",")]
    if len(parts) != 4 or not parts[1]:
        return None
    return Gpu(name=parts[0], compute_capability=parts[1], driver=parts[2], memory_mib=int(float(parts[3])))


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@functools.lru_cache(maxsize=1)
def detect() -> Toolchain:
    nvcc = _find_nvcc()
    gxx = shutil.which("g++")
    return Toolchain(
        nvcc=nvcc,
        nvcc_version=_first_line([nvcc, "--version"], containing=", release ") if nvcc else "",
        gxx=gxx,
        gxx_version=_first_line([gxx, "--version"]) if gxx else "",
        gpu=_find_gpu(),
        cpu_model=_cpu_model(),
    )
