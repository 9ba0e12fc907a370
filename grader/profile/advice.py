"""Plain advice from a profile: what limits a kernel, in sentences a learner can act on.

Rules are read in order of how much they usually cost, and each names the figure it rests on, so a user can
check it in the table (or in the Nsight Compute GUI with --raw): spills to local memory; a grid too small for the
GPU; uncoalesced or narrow global loads; memory pipes busy while DRAM is not (no reuse); memory-bound near the
copy ceiling; low occupancy and what limits it; compute-bound; otherwise latency, named by the top stall.
The call's advice is a headline (how far from the roofline, bound by what) and the slowest kernel's first two
rules (at 90% of the roofline or more the headline says that little is left to gain). Tuned on all 43 CUDA
rungs' profiles on an H100 (docs/profile.md): a grid one wave short of the SMs is not "idle", and a kernel
already on tensor cores is not told to use them.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.profile.model import KernelProfile, Profile

BUSY_PCT = 60.0  # a throughput this close to speed of light is the limit
IDLE_PCT = 40.0  # both below this: neither memory nor compute is busy (latency-bound)
COALESCED_PCT = 60.0  # global-load sector efficiency below this wastes most fetched bytes
LOW_OCCUPANCY_PCT = 30.0
IDLE_SMS_WORTH_SAYING = 0.1  # a grid that leaves fewer SMs idle than this share costs too little to name
TENSOR_BUSY_PCT = 20.0  # the tensor pipe this busy: the kernel already runs on tensor cores
NEAR_ROOFLINE = 0.9  # a call at this share of its speed of light has little left to gain
SCATTERED_SECTORS = 16  # sectors per warp-wide load above a coalesced float4's: scattered addresses
ACCESS_WIDTHS = (1, 2, 4, 8, 16)  # bytes a thread's global load instruction can move
STALL_HINTS = {
    "long_scoreboard": "warps wait on global or local memory: keep more independent loads in flight per thread "
    "(unroll, vectorise) or run more warps",
    "barrier": "warps wait at __syncthreads: give threads even work between barriers, or need fewer barriers",
    "short_scoreboard": "warps wait on shared memory or special functions (exp, division): avoid bank conflicts, "
    "keep reused values in registers",
    "mio_throttle": "the shared-memory pipe is saturated: load wider (float4) from shared memory, fewer times",
    "lg_throttle": "too many small global loads queue up: vectorise them (float4) so fewer instructions move the data",
    "math_pipe_throttle": "the arithmetic pipes are saturated: use fewer or cheaper instructions, or tensor cores",
    "wait": "warps wait on fixed-latency dependencies: interleave independent work (unroll with several accumulators)",
    "not_selected": "enough warps are ready; the scheduler is the limit: the kernel is issue-bound",
    "membar": "warps wait on memory fences: use fewer __threadfence calls",
    "drain": "warps wait for their stores to drain at exit",
    "no_instruction": "warps wait for instructions (instruction cache misses or branches)",
    "dispatch_stall": "the dispatcher stalls: see the Warp State section in Nsight Compute",
}


def _blocks(grid: str) -> int | None:
    numbers = [int(n) for n in re.findall(r"\d+", grid)]
    if not numbers:
        return None
    total = 1
    for n in numbers:
        total *= n
    return total


def _access_width(useful_bytes: float | None) -> int | None:
    """The load width a thread's useful bytes per load stand for, where they are one (within 10%): ncu's averages
    over loads of several kinds (or partly predicated ones) can give 0.9 bytes, which is no load's width."""
    if useful_bytes is None:
        return None
    return next((w for w in ACCESS_WIDTHS if abs(useful_bytes - w) <= 0.1 * w), None)


def for_kernel(k: KernelProfile, sms: int = 132) -> list[str]:
    """Advice for one kernel, most important first (`sms`: the GPU's multiprocessors, H100 SXM's by default)."""
    said: list[str] = []
    memory, compute = k.memory_sol_pct, k.compute_sol_pct
    if k.local_memory_bytes and k.local_memory_bytes > 0:
        said.append(
            f"registers spill to local memory ({k.local_memory_bytes / 1e6:.2f} MB of local traffic at "
            f"{k.registers_per_thread or '?'} registers/thread): keep fewer values live per thread, or relax "
            "__launch_bounds__"
        )
    blocks = _blocks(k.grid)
    if blocks is not None and blocks < (1 - IDLE_SMS_WORTH_SAYING) * sms:
        idle = "most of the GPU is idle" if blocks <= sms / 2 else f"{sms - blocks} SMs get no block"
        said.append(
            f"the grid has {blocks} block{'s' if blocks != 1 else ''} for {sms} SMs: {idle}; "
            "launch at least a few blocks per SM (split the work finer, e.g. one block per row)"
        )
    efficiency, width = k.global_load_sector_efficiency_pct, _access_width(k.global_load_bytes_per_instruction)
    if efficiency is not None and efficiency < COALESCED_PCT:
        what = f"{width}-byte and " if width else ""
        said.append(
            f"global loads are {what}{efficiency:.0f}% sector-efficient (of each 32-byte sector fetched, "
            f"{efficiency:.0f}% is used): coalesce (neighbouring threads read neighbouring addresses) or vectorise"
        )
    elif efficiency is None and (spr := k.global_load_sectors_per_request) is not None and spr > SCATTERED_SECTORS:
        said.append(
            f"each warp-wide global load touches {spr:.0f} 32-byte sectors (a coalesced float load touches 4, a "
            "float4 load 16): neighbouring threads should read neighbouring addresses"
        )
    elif width is not None and width < 8 and memory is not None and memory >= BUSY_PCT:
        said.append(f"global loads are {width}-byte: vectorise them (float4) to move the same bytes in fewer loads")
    dram = k.dram_fraction_of_copy
    if memory is not None and memory >= BUSY_PCT and dram is not None and dram < 0.5:
        said.append(
            f"memory pipes are busy ({memory:.0f}% of speed of light) but DRAM runs at {dram:.0%} of copy "
            "bandwidth: the traffic is in L1/L2, so reuse each loaded value more (tile through shared memory "
            "or registers)"
        )
    elif memory is not None and memory >= BUSY_PCT:
        said.append(
            f"memory-bound at {share(dram)} of copy bandwidth: only moving fewer bytes (fusing passes, reusing data) "
            "makes it faster"
            if dram is not None
            else f"memory-bound ({memory:.0f}% of memory speed of light): move fewer bytes"
        )
    occupancy = k.occupancy
    if occupancy.achieved_pct is not None and occupancy.achieved_pct < LOW_OCCUPANCY_PCT:
        limit = (
            f", limited by {occupancy.limiter.replace('_', ' ')}"
            if occupancy.limiter and (occupancy.theoretical_pct or 100) < 100
            else ""
        )
        said.append(
            f"occupancy is low: {occupancy.achieved_pct:.0f}% achieved of {occupancy.theoretical_pct or 0:.0f}% "
            f"theoretical{limit}"
        )
    tensor = k.tensor_pipe_pct
    if compute is not None and compute >= BUSY_PCT:
        if tensor is not None and tensor >= TENSOR_BUSY_PCT:
            said.append(
                f"compute-bound at {compute:.0f}% of SM throughput, the tensor cores at {tensor:.0f}% of theirs: "
                "keep them fed (deeper load pipelining, larger tiles per warp group)"
            )
        else:
            fp32 = f"; FP32 at {k.fp32_fraction:.0%} of the FMA ceiling" if k.fp32_fraction is not None else ""
            said.append(
                f"compute-bound at {compute:.0f}% of SM throughput{fp32}: use tensor cores (mma or wgmma; TF32 for "
                "float data, tf32x3 where float32 accuracy is needed) or fewer instructions"
            )
    if memory is not None and compute is not None and memory < IDLE_PCT and compute < IDLE_PCT and k.stalls:
        top = k.stalls[0]
        hint = STALL_HINTS.get(top.reason, "see the Warp State section in Nsight Compute")
        said.append(
            f"latency-bound (memory {memory:.0f}%, compute {compute:.0f}% of speed of light); the top stall is "
            f"{top.reason} ({top.share:.0%} of stall cycles): {hint}"
        )
    return said


def for_call(p: Profile) -> list[str]:
    """One or two sentences for the whole call: how far from the roofline, then the slowest kernel's first rules."""
    t = p.totals
    said = []
    if t.sol is not None and t.roofline_us is not None:
        said.append(
            f"{t.bound_by}-bound benchmark at {share(t.sol)} of this GPU's speed of light "
            f"({t.duration_us:,.1f} us against a roofline of {t.roofline_us:,.1f} us)"
        )
        if t.sol >= NEAR_ROOFLINE:
            said[-1] += ": near the roofline, little is left to gain"
    timed = [k for k in p.kernels if k.duration_us]
    if timed:
        slowest = max(timed, key=lambda k: k.duration_us or 0.0)
        part = (slowest.duration_us or 0.0) / t.duration_us if t.duration_us else 1.0
        where = f"{_short(slowest.name)} ({part:.0%} of the time)" if len(timed) > 1 else _short(slowest.name)
        if slowest.advice:
            said.append(f"{where}: {'; '.join(slowest.advice[:2])}")
    if not p.kernels:
        said.append("no kernel of the submission was profiled: did solve launch any?")
    return said


def share(fraction: float) -> str:
    """A fraction as a percentage a reader can tell from zero: 0.39%, 12%, 98%."""
    return f"{fraction:.2%}" if abs(fraction) < 0.01 else f"{fraction:.0%}"


def _short(name: str) -> str:
    """A kernel's name without its parameter list."""
    return name.split("(", 1)[0].strip() or name
