"""The profile summary: what `grader profile --json` prints, what a verdict keeps, and docs/profile.schema.json.

One Profile is one call of one benchmark, profiled by Nsight Compute: a summary of each kernel the submission
launched (the harness's own fill and flush kernels left out), the call's totals against the device's measured
ceilings, and plain advice. Every figure ncu did not report is null, never a guess. The JSON schema is generated
from these models (`grader profile --schema > docs/profile.schema.json`; a test keeps the two equal).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Stall(_Strict):
    reason: str = Field(description="ncu's stall reason, e.g. long_scoreboard (waiting on global or local memory)")
    value: float = Field(description="the reason's figure in the metric ncu reported it by (see `metric`)")
    metric: str = Field(description="that metric, e.g. smsp__average_warps_issue_stalled_*_per_issue_active.ratio")
    share: float = Field(description="its fraction of all stall reasons' figures (0..1)")


class Occupancy(_Strict):
    achieved_pct: float | None = Field(
        default=None, description="active warps over the SM's maximum, averaged while active"
    )
    theoretical_pct: float | None = Field(default=None, description="the most this launch configuration allows")
    limiter: str | None = Field(
        default=None, description="registers, shared_memory, block_size or warps: the tightest limit"
    )
    blocks_per_sm_limits: dict[str, float] = Field(
        default_factory=dict, description="blocks per SM each resource allows (launch__occupancy_limit_*)"
    )


class KernelProfile(_Strict):
    name: str = Field(description="the kernel's function name")
    grid: str = Field(default="", description="grid size as ncu prints it, e.g. (4096, 1, 1)")
    block: str = Field(default="", description="block size as ncu prints it, e.g. (256, 1, 1)")
    duration_us: float | None = Field(default=None, description="gpu__time_duration.sum")
    memory_sol_pct: float | None = Field(default=None, description="memory throughput, % of speed of light")
    compute_sol_pct: float | None = Field(default=None, description="SM (compute) throughput, % of speed of light")
    dram_bytes: float | None = Field(default=None, description="bytes read and written in device memory")
    dram_gbps: float | None = Field(default=None, description="achieved DRAM bandwidth, GB/s")
    dram_fraction_of_copy: float | None = Field(default=None, description="dram_gbps over the measured copy bandwidth")
    fp32_gflops: float | None = Field(default=None, description="achieved FP32 rate from the FFMA/FADD/FMUL counters")
    fp32_fraction: float | None = Field(default=None, description="fp32_gflops over the measured FP32 FMA ceiling")
    tensor_pipe_pct: float | None = Field(default=None, description="tensor-core pipe utilisation, % of peak")
    occupancy: Occupancy = Field(default_factory=Occupancy)
    registers_per_thread: int | None = None
    shared_memory_per_block_bytes: int | None = Field(default=None, description="static + dynamic shared memory")
    local_memory_bytes: float | None = Field(default=None, description="local-memory (register spill) traffic, bytes")
    l1_hit_pct: float | None = None
    l2_hit_pct: float | None = None
    global_load_bytes_per_instruction: float | None = Field(
        default=None, description="bytes one thread loads per global load (4: scalar float, 16: float4)"
    )
    global_load_sectors_per_request: float | None = Field(
        default=None,
        description="32-byte sectors one warp-wide global load touches (4: coalesced float, 32: scattered)",
    )
    global_load_sector_efficiency_pct: float | None = Field(
        default=None, description="bytes used of each 32-byte sector fetched by global loads (100: fully coalesced)"
    )
    stalls: list[Stall] = Field(default_factory=list, description="the top warp-stall reasons, largest first")
    advice: list[str] = Field(default_factory=list, description="plain sentences about this kernel")


class CallTotals(_Strict):
    duration_us: float = Field(description="sum of the submission's kernels' durations in the profiled call")
    flops: float = Field(description="FLOPs of the benchmark by the problem's formula")
    bytes: float = Field(description="bytes of the benchmark by the problem's formula")
    gbps: float | None = Field(default=None, description="useful bytes / duration_us")
    gflops: float | None = Field(default=None, description="useful FLOPs / duration_us")
    fraction_of_copy_bandwidth: float | None = None
    fraction_of_compute_ceiling: float | None = None
    roofline_us: float | None = Field(default=None, description="max(flops / compute ceiling, bytes / copy bandwidth)")
    sol: float | None = Field(default=None, description="roofline_us / duration_us: the fraction of speed of light")
    bound_by: str = Field(default="memory", description="memory or compute: which roof this benchmark meets first")


class Ceiling(_Strict):
    copy_gbps: float | None = None
    fp32_gflops: float | None = None
    sgemm_gflops: float | None = None
    hgemm_gflops: float | None = None  # only for a problem with 16-bit inputs, whose compute roof it is
    source: str = ""


class Profile(_Strict):
    schema_version: int = SCHEMA_VERSION
    problem: str
    benchmark: str
    sizes: dict[str, int]
    device: str = ""
    ncu_version: str = ""
    ncu_options: list[str] = Field(default_factory=list, description="how ncu was run (clock and cache control)")
    kernels: list[KernelProfile]
    harness_kernels_left_out: int = Field(default=0, description="launches of the harness's fill/flush kernels ignored")
    totals: CallTotals
    ceilings: Ceiling = Field(default_factory=Ceiling)
    advice: list[str] = Field(default_factory=list, description="one or two sentences a learner can act on")
    raw_report: str | None = Field(default=None, description="path of the kept .ncu-rep (--raw), else null")
    note: str = Field(
        default="a diagnostic of one call under Nsight Compute, never the score",
        description="what this profile is and is not",
    )


def schema() -> dict:
    """The JSON schema of a Profile, as docs/profile.schema.json holds it."""
    return Profile.model_json_schema()


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True) + "\n"
