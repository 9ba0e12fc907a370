"""Device ceilings: the peak rates that put achieved GB/s and GFLOP/s in context and set the physical floor.

The floor is deliberately generous (theoretical peaks, tensor-core rate for FLOPs): a time below it cannot
be honest, whatever the kernel does.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

TENSOR_TF32_OVER_FP32 = 8  # Hopper/Ampere dense TF32 tensor-core rate over the FP32 FMA rate


@dataclass(frozen=True)
class Ceilings:
    bandwidth_bytes_s: float | None   # peak memory bandwidth, read + write
    fp32_flops_s: float | None        # FP32 FMA rate (2 flops per FMA)
    floor_flops_s: float | None       # the fastest any arithmetic could go (tensor cores), for the floor
    source: str

    def floor_s(self, flops: float, nbytes: float) -> float:
        times = [0.0]
        if self.bandwidth_bytes_s:
            times.append(nbytes / self.bandwidth_bytes_s)
        if self.floor_flops_s:
            times.append(flops / self.floor_flops_s)
        return max(times)


NONE = Ceilings(None, None, None, "no ceilings for this track")


@functools.lru_cache(maxsize=2)
def for_track(track: str) -> Ceilings:
    return _gpu_ceilings() if track == "cuda" else NONE


def _gpu_ceilings() -> Ceilings:
    """Theoretical peaks from NVML (memory clock x bus width, SM count x 128 FP32 lanes x clock)."""
    try:
        import pynvml
        import torch
        pynvml.nvmlInit()
        handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        mem_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_MEM)
        bus_bits = pynvml.nvmlDeviceGetMemoryBusWidth(handle)
        sm_mhz = pynvml.nvmlDeviceGetMaxClockInfo(handle, pynvml.NVML_CLOCK_SM)
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
    except Exception:  # no NVML or no GPU: no ceilings, no floor
        return NONE
    bandwidth = 2 * mem_mhz * 1e6 * bus_bits / 8
    fp32 = sms * 128 * 2 * sm_mhz * 1e6
    return Ceilings(bandwidth, fp32, fp32 * TENSOR_TF32_OVER_FP32, "theoretical peaks from NVML")
