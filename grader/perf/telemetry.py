"""GPU telemetry sampled through NVML by the trusted grader while the harness runs its benchmarks.

Clocks, temperature, power and throttle reasons are stored with each benchmark result, so a score measured
on a hot or power-capped GPU shows it (and is flagged `throttled`). `load_average` reads the machine's load,
which grader/perf/stats.py turns into a flag on timings taken on a loaded machine.
"""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from grader import settings

# Throttle reasons that slow a kernel down (idle and application-clock settings are not throttling).
_SLOWING = {0x2: "sw_power_cap", 0x8: "hw_slowdown", 0x20: "sw_thermal", 0x40: "hw_thermal", 0x80: "hw_power_brake"}


def nvml_index() -> int:
    """NVML numbers GPUs ignoring CUDA_VISIBLE_DEVICES; a pinned worker says its GPU in KERNELJUDGE_GPU."""
    return int(settings.GPU.get())


class NullSampler:
    samples: ClassVar[list[dict]] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class Sampler(threading.Thread):
    """Samples GPU 0 of this process's view every `period_s` seconds between __enter__ and __exit__ (20 ms:
    a short benchmark lasts a few tens of milliseconds)."""

    def __init__(self, period_s: float = 0.02):
        super().__init__(daemon=True)
        self.period_s = period_s
        self.samples: list[dict] = []
        self._done = threading.Event()
        self._handle = None

    def __enter__(self):
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(nvml_index())
            self.start()
        except Exception:  # NVML missing: no telemetry, the run goes on
            self._handle = None
        return self

    def __exit__(self, *exc):
        if self._handle is not None:
            self._done.set()
            self.join()
        return False

    def run(self):
        nv, h = self._nvml, self._handle
        while not self._done.wait(self.period_s):
            try:
                self.samples.append(
                    {
                        "t": time.time(),
                        "sm_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
                        "mem_mhz": nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
                        "temp_c": nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
                        "power_w": nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
                        "throttle": nv.nvmlDeviceGetCurrentClocksEventReasons(h),
                    }
                )
            except Exception:
                return


def load_average(path: str = "/proc/loadavg") -> float | None:
    """The machine's 1-minute load average (runnable threads), None where the system does not say."""
    try:
        with open(path) as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def summarise(samples: list[dict], start: float | None = None, end: float | None = None) -> dict:
    """Ranges of clocks, temperature and power over [start, end], and the slowing throttle reasons seen."""
    window = [s for s in samples if (start is None or s["t"] >= start) and (end is None or s["t"] <= end)]
    if not window:
        return {}
    reasons = sorted({name for s in window for bit, name in _SLOWING.items() if s["throttle"] & bit})
    return {
        "samples": len(window),
        "sm_mhz": [min(s["sm_mhz"] for s in window), max(s["sm_mhz"] for s in window)],
        "mem_mhz": [min(s["mem_mhz"] for s in window), max(s["mem_mhz"] for s in window)],
        "temp_c_max": max(s["temp_c"] for s in window),
        "power_w_max": round(max(s["power_w"] for s in window), 1),
        "throttle_reasons": reasons,
        "throttled": bool(reasons),
    }
