"""Device ceilings: what this GPU or CPU can do, to put every result in context and to bound it from below.

Measured once per GPU (name and driver) and cached as JSON: the copy bandwidth (bytes read + written by a
large device-to-device copy or elementwise kernel, whichever is faster, at a benchmark's size and at 1 GiB), the
FP32 FMA rate (a kernel of independent FMA chains), what cuBLAS reaches on FP32 SGEMM (torch.matmul with TF32
off) and on FP16 GEMM with FP32 accumulation (the roof of a problem with 16-bit inputs). Each benchmark reports
its fraction of these.

The physical floor that rejects impossible times uses the theoretical peaks from NVML instead (memory
clock x bus width; SMs x 128 lanes x clock x 8 for tensor-core TF32, twice that for a problem with 16-bit
inputs, which FP16/BF16 tensor cores run at 16x the FP32 rate): generous on purpose, so no honest kernel can
fall below it, whatever it does. `for_inputs` gives the view of the ceilings that fits a problem's inputs.

The CPU track's ceilings are measured once per machine (CPU model, core count) the same way: the copy
bandwidth of a 256 MiB tensor copy and the FP32 rate of a matrix product, both PyTorch's own multithreaded
kernels, the best of a few tries. The CPU has no theoretical peak to ask for, so its floor is those measured
rates times CPU_FLOOR_SLACK: an honest kernel on flushed caches cannot beat the machine's own copy by that
much, while an empty or skipped call (tens of microseconds of handshake) falls far below it.
"""

from __future__ import annotations

import ctypes
import functools
import json
import subprocess
import tempfile
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from grader import tracks

TENSOR_TF32_OVER_FP32 = 8  # Hopper/Ampere dense TF32 tensor-core rate over the FP32 FMA rate
TENSOR_FP16_OVER_TF32 = 2  # dense FP16/BF16 tensor-core rate over TF32 (H100: 989 against 495 TFLOP/s)
# Problem.tensor_rate: 1 (float32), TENSOR_FP16_OVER_TF32 (16-bit inputs), 4 (FP8/INT8 inputs: 1979 on an H100)
CPU_FLOOR_SLACK = 4.0  # the CPU floor: measured copy bandwidth and matmul rate, times this

FMA_KERNEL = r"""
__global__ void fma_chains(float* out, int iters) {
    float b = 1.0000001f, c = 1e-7f, x[8];
    for (int k = 0; k < 8; ++k) x[k] = threadIdx.x * 1e-6f + k;
    for (int i = 0; i < iters; ++i)
        #pragma unroll
        for (int k = 0; k < 8; ++k) x[k] = fmaf(x[k], b, c);
    float s = 0;
    for (int k = 0; k < 8; ++k) s += x[k];
    if (s == 1234.5f) out[blockIdx.x] = s;  // never true; keeps the chains alive
}
extern "C" void run(float* out, int blocks, int iters) { fma_chains<<<blocks, 256>>>(out, iters); }
"""


@dataclass(frozen=True)
class Ceilings:
    copy_bytes_s: float | None  # measured: read + write bytes of a device-to-device copy
    fp32_flops_s: float | None  # measured: FP32 FMA rate, 2 flops per FMA
    sgemm_flops_s: float | None  # measured: cuBLAS FP32 SGEMM at 8192^3
    peak_bytes_s: float | None  # theoretical, for the floor
    peak_flops_s: float | None  # theoretical tensor-core rate, for the floor
    source: str
    hgemm_flops_s: float | None = None  # measured: cuBLAS FP16 GEMM at 8192^3 (a roof only for 16-bit inputs)

    def for_inputs(self, tensor_rate: int) -> Ceilings:
        """The ceilings that fit a problem whose inputs allow `tensor_rate` times TF32's tensor-core rate
        (Problem.tensor_rate): the floor's tensor peak grows by it; with 16-bit inputs the FP16 GEMM rate is a
        compute roof, otherwise (float32, or 8-bit inputs that FP8/INT8 mma run twice as fast) no roof at all."""
        peak = self.peak_flops_s * tensor_rate if self.peak_flops_s else None
        roof = self.hgemm_flops_s if tensor_rate == TENSOR_FP16_OVER_TF32 else None
        return replace(self, peak_flops_s=peak, hgemm_flops_s=roof)

    def floor_s(self, flops: float, nbytes: float) -> float:
        times = [0.0]
        if self.peak_bytes_s:
            times.append(nbytes / self.peak_bytes_s)
        if self.peak_flops_s:
            times.append(flops / self.peak_flops_s)
        return max(times)


NONE = Ceilings(None, None, None, None, None, "no ceilings for this track")


def for_track(track: str) -> Ceilings:
    """The measured ceilings of the device `track` runs on (the GPU's for cuda, triton and cupy)."""
    return _for_device(tracks.get(track).device.gpu)


@functools.lru_cache(maxsize=2)
def _for_device(gpu: bool) -> Ceilings:
    return gpu_ceilings() if gpu else cpu_ceilings()


def cpu_ceilings() -> Ceilings:
    """This machine's CPU ceilings, measured on first use and cached under the build cache."""
    import os

    from grader.build.compiler import cache_root
    from grader.toolchain import detect

    name = f"cpu-{detect().cpu_model}-{os.cpu_count()}.json".replace(" ", "_").replace("/", "_")
    path = cache_root() / "ceilings" / name
    try:
        return Ceilings(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        pass  # absent or unreadable: measure
    found = _measure_cpu()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(found), indent=2))
    return found


def _measure_cpu(tries: int = 5) -> Ceilings:
    import time

    import torch

    def best_s(work, count: int) -> float:
        work()  # first touch and thread start-up stay out
        times = []
        for _ in range(count):
            start = time.perf_counter()
            work()
            times.append(time.perf_counter() - start)
        return min(times)

    src = torch.ones(64 << 20)  # 256 MiB
    dst = torch.empty_like(src)
    copy = best_s(lambda: dst.copy_(src), tries)
    a, b = torch.rand(2048, 2048), torch.rand(2048, 2048)
    matmul = best_s(lambda: torch.matmul(a, b), tries)
    copy_bytes_s, flops_s = 2 * src.numel() * 4 / copy, 2 * 2048**3 / matmul
    return Ceilings(
        copy_bytes_s=copy_bytes_s,
        fp32_flops_s=flops_s,
        sgemm_flops_s=flops_s,
        peak_bytes_s=copy_bytes_s * CPU_FLOOR_SLACK,
        peak_flops_s=flops_s * CPU_FLOOR_SLACK,
        source=f"measured (tensor copy, FP32 matmul, best of {tries}); floor: {CPU_FLOOR_SLACK:g} x measured",
    )


def gpu_ceilings() -> Ceilings:
    """This GPU's ceilings, measured on first use and cached under the build cache."""
    from grader.build.compiler import cache_root
    from grader.toolchain import detect

    gpu = detect().gpu
    if gpu is None:
        return NONE
    path = cache_root() / "ceilings" / f"{gpu.name}-{gpu.driver}-v3.json".replace(" ", "_")
    if path.is_file():
        return Ceilings(**json.loads(path.read_text()))
    try:
        found = _measure()
    except Exception as error:  # no CUDA in this process: no ceilings, no floor
        return Ceilings(None, None, None, None, None, f"not measured: {error}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(found), indent=2))
    return found


def _measure() -> Ceilings:
    import pynvml
    import torch

    from grader.perf.telemetry import nvml_index
    from grader.perf.timing import time_callable

    device = torch.cuda.current_device()
    pynvml.nvmlInit()
    handle = pynvml.nvmlDeviceGetHandleByIndex(nvml_index())
    mem_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
    bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
    sm_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
    sms = torch.cuda.get_device_properties(device).multi_processor_count

    # The fastest rate bytes were seen to move: cudaMemcpy (what copy_ calls) or an elementwise kernel (neg
    # reads and writes the same bytes), at 1 GiB and at 128 MiB. On an H100 good kernels move 3.2 TB/s where
    # cudaMemcpy moves about 3.0, and at a benchmark's size (a few hundred MB) the last written lines still
    # sit in the 50 MB L2 when the kernel ends, so a 1 GiB copy alone put memory-bound rungs above 100%.
    def copy_rate(elements: int) -> float:
        src = torch.rand(elements, device="cuda")
        dst = torch.empty_like(src)
        seconds = (
            min(
                time_callable(dst.copy_, lambda _i: (src,), budget_ms=1000).summary["median_us"],
                time_callable(lambda s: torch.neg(s, out=dst), lambda _i: (src,), budget_ms=1000).summary["median_us"],
            )
            * 1e-6
        )
        return 2 * elements * 4 / seconds

    copy_bytes_s = max(copy_rate(256 << 20), copy_rate(32 << 20))

    a = torch.rand(8192, 8192, device="cuda")
    b = torch.rand(8192, 8192, device="cuda")
    previous = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    try:
        sgemm = time_callable(torch.matmul, lambda _i: (a, b), budget_ms=3000).summary["median_us"] * 1e-6
    finally:
        torch.backends.cuda.matmul.allow_tf32 = previous
    a, b = a.half(), b.half()
    hgemm = time_callable(torch.matmul, lambda _i: (a, b), budget_ms=2000).summary["median_us"] * 1e-6

    blocks, iters = sms * 8, 16384
    run, out = _fma_kernel(), torch.empty(blocks, device="cuda")
    fma = (
        time_callable(
            lambda: run(ctypes.c_void_p(out.data_ptr()), blocks, iters), lambda _i: (), budget_ms=1000
        ).summary["median_us"]
        * 1e-6
    )
    return Ceilings(
        copy_bytes_s=copy_bytes_s,
        fp32_flops_s=blocks * 256 * iters * 8 * 2 / fma,
        sgemm_flops_s=2 * 8192**3 / sgemm,
        peak_bytes_s=2 * mem_mhz * 1e6 * bus_bits / 8,
        peak_flops_s=sms * 128 * 2 * sm_mhz * 1e6 * TENSOR_TF32_OVER_FP32,
        source="measured (copy, FMA, cuBLAS SGEMM and FP16 GEMM); floor from NVML peaks",
        hgemm_flops_s=2 * 8192**3 / hgemm,
    )


def _fma_kernel():
    from grader.toolchain import detect

    tools = detect()
    assert tools.nvcc and tools.gpu, "the FMA kernel needs nvcc and a GPU"
    folder = Path(tempfile.mkdtemp(prefix="kerneljudge-fma-"))
    (folder / "fma.cu").write_text(FMA_KERNEL)
    subprocess.run(
        [
            tools.nvcc,
            "-O3",
            f"-arch={tools.gpu.arch}",
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "-o",
            str(folder / "fma.so"),
            str(folder / "fma.cu"),
        ],
        check=True,
        capture_output=True,
    )
    return ctypes.CDLL(str(folder / "fma.so")).run
