"""From ncu's launches to the Profile: each submission kernel's figures, the call's totals, the advice.

Each figure is read from the metric `--set full` reports for it (the first of a few names, as they differ
between ncu versions); a figure ncu did not report stays None. Achieved DRAM bandwidth and FP32 rate are put
against the device's measured ceilings (grader/perf/ceilings.py), the same ones every verdict uses; the
call's totals use the problem's own FLOP and byte formulas over the summed kernel time, so the profile's SOL
is the verdict's SOL measured by ncu.
"""

from __future__ import annotations

import re

from grader.perf import roofline
from grader.perf.ceilings import Ceilings
from grader.profile import advice, parse
from grader.profile.model import CallTotals, Ceiling, KernelProfile, Occupancy, Profile, Stall
from grader.profile.parse import Launch

TOP_STALLS = 3
LIMITERS = {  # launch__occupancy_limit_<key>: blocks per SM this resource allows -> the name a user reads
    "registers": "registers",
    "shared_mem": "shared_memory",
    "warps": "block_size",
    "blocks": "blocks_per_sm",
}
STALL_FAMILIES = [  # the first family ncu reported is used; names differ between ncu versions
    re.compile(r"^smsp__average_warps_issue_stalled_(\w+?)_per_issue_active\.ratio$"),
    re.compile(r"^smsp__average_warp_latency_issue_stalled_(\w+?)\.ratio$"),
    re.compile(r"^smsp__warp_issue_stalled_(\w+?)_per_warp_active\.pct$"),
    re.compile(r"^smsp__pcsamp_warps_issue_stalled_(\w+)$"),  # sampled counts (SourceCounters)
]
_TENSOR = re.compile(r"^sm__pipe_tensor\w*\.(?:avg\.)?pct_of_peak_sustained_(?:active|elapsed)$")
NOT_STALLS = ("selected", "not_issued")


def kernel(launch: Launch, ceilings: Ceilings) -> KernelProfile:
    seconds = launch.get("gpu__time_duration.sum")
    dram = launch.get("dram__bytes.sum")
    if dram is None and launch.get("dram__bytes_read.sum") is not None:
        dram = (launch.get("dram__bytes_read.sum") or 0) + (launch.get("dram__bytes_write.sum") or 0)
    dram_rate = launch.get("dram__bytes.sum.per_second") or (dram / seconds if dram is not None and seconds else None)
    if dram is None and dram_rate is not None and seconds:
        dram = dram_rate * seconds
    flops_rate = _fp32_rate(launch, seconds)
    static, dynamic = (
        launch.get("launch__shared_mem_per_block_static"),
        launch.get("launch__shared_mem_per_block_dynamic"),
    )
    shared = None if static is None and dynamic is None else (static or 0) + (dynamic or 0)
    registers = launch.get("launch__registers_per_thread")
    profile = KernelProfile(
        name=launch.name,
        grid=launch.grid,
        block=launch.block,
        duration_us=seconds * 1e6 if seconds is not None else None,
        memory_sol_pct=launch.get(
            "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
            "gpu__compute_memory_throughput.pct_of_peak_sustained_elapsed",
        ),
        compute_sol_pct=launch.get("sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        dram_bytes=dram,
        dram_gbps=dram_rate / 1e9 if dram_rate is not None else None,
        dram_fraction_of_copy=_ratio(dram_rate, ceilings.copy_bytes_s),
        fp32_gflops=flops_rate / 1e9 if flops_rate is not None else None,
        fp32_fraction=_ratio(flops_rate, ceilings.fp32_flops_s),
        tensor_pipe_pct=next((v for k, v in sorted(launch.metrics.items()) if _TENSOR.match(k)), None),
        occupancy=_occupancy(launch),
        registers_per_thread=int(registers) if registers is not None else None,
        shared_memory_per_block_bytes=int(shared) if shared is not None else None,
        local_memory_bytes=_local_bytes(launch),
        l1_hit_pct=launch.get("l1tex__t_sector_hit_rate.pct"),
        l2_hit_pct=launch.get("lts__t_sector_hit_rate.pct"),
        global_load_sector_efficiency_pct=_sector_efficiency(launch),
        global_load_bytes_per_instruction=None,
        stalls=stalls(launch),
    )
    profile.global_load_bytes_per_instruction = _load_width(launch, profile.global_load_sector_efficiency_pct)
    sectors, requests = (
        launch.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
        launch.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    )
    profile.global_load_sectors_per_request = sectors / requests if sectors is not None and requests else None
    profile.advice = advice.for_kernel(profile, sms=int(launch.get("device__attribute_multiprocessor_count") or 132))
    return profile


def _ratio(value: float | None, ceiling: float | None) -> float | None:
    return value / ceiling if value is not None and ceiling else None


def _fp32_rate(launch: Launch, seconds: float | None) -> float | None:
    """FP32 FLOP/s: (FADD + FMUL + 2 FFMA) per elapsed cycle x cycles per second, or the counts over the time."""
    per_cycle = [
        launch.get(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
        for op in ("fadd", "fmul", "ffma")
    ]
    clock = launch.get("smsp__cycles_elapsed.avg.per_second")
    if all(v is not None for v in per_cycle) and clock:
        fadd, fmul, ffma = (v or 0.0 for v in per_cycle)
        return (fadd + fmul + 2 * ffma) * clock
    counts = [launch.get(f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("fadd", "fmul", "ffma")]
    if all(v is not None for v in counts) and seconds:
        fadd, fmul, ffma = (v or 0.0 for v in counts)
        return (fadd + fmul + 2 * ffma) / seconds
    return None


def _occupancy(launch: Launch) -> Occupancy:
    limits = {
        name: value
        for key, name in LIMITERS.items()
        if (value := launch.get(f"launch__occupancy_limit_{key}")) is not None
    }
    theoretical = launch.get("sm__maximum_warps_per_active_cycle_pct")
    limiter = min(limits, key=lambda name: limits[name]) if limits else None  # ties: the order of LIMITERS
    if theoretical is not None and theoretical >= 100:
        limiter = None  # nothing limits a launch that can fill the SM
    return Occupancy(
        achieved_pct=launch.get("sm__warps_active.avg.pct_of_peak_sustained_active"),
        theoretical_pct=theoretical,
        limiter=limiter,
        blocks_per_sm_limits=limits,
    )


def _local_bytes(launch: Launch) -> float | None:
    parts = []
    for op in ("ld", "st"):
        value = launch.get(f"l1tex__t_bytes_pipe_lsu_mem_local_op_{op}.sum")
        if value is None and (sectors := launch.get(f"l1tex__t_sectors_pipe_lsu_mem_local_op_{op}.sum")) is not None:
            value = sectors * 32
        if value is not None:
            parts.append(value)
    return sum(parts) if parts else None


def _sector_efficiency(launch: Launch) -> float | None:
    direct = launch.get("smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct")
    if direct is not None:
        return direct
    ideal, actual = (
        launch.get("memory_l2_theoretical_sectors_global_ideal"),
        launch.get("memory_l2_theoretical_sectors_global"),
    )
    return 100 * ideal / actual if ideal is not None and actual else None


def _load_width(launch: Launch, efficiency_pct: float | None) -> float | None:
    """Useful bytes one thread loads per global load: sectors per request x 32 B x efficiency / 32 threads."""
    sectors = launch.get("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")
    requests = launch.get("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")
    if not sectors or not requests or efficiency_pct is None:
        return None
    return sectors / requests * efficiency_pct / 100


def stalls(launch: Launch) -> list[Stall]:
    """The top stall reasons, from the first family of stall metrics ncu reported."""
    for family in STALL_FAMILIES:
        found = {
            m.group(1): (k, v)
            for k, v in sorted(launch.metrics.items())
            if (m := family.match(k)) and not k.endswith("_not_issued") and m.group(1) not in NOT_STALLS and v > 0
        }
        if found:
            total = sum(v for _, v in found.values())
            ranked = sorted(found.items(), key=lambda item: -item[1][1])[:TOP_STALLS]
            return [Stall(reason=r, value=v, metric=k, share=v / total) for r, (k, v) in ranked]
    return []


def profile(
    problem: str,
    benchmark: str,
    sizes: dict[str, int],
    work: tuple[float, float],
    launched: list[Launch],
    ceilings: Ceilings,
    **facts,
) -> Profile:
    """The Profile of one call: `launched` is every launch ncu saw; the harness's own are counted and left out."""
    ours = parse.submissions(launched)
    kernels = [kernel(launch, ceilings) for launch in ours]
    flops, nbytes = work
    seconds = sum(k.duration_us or 0.0 for k in kernels) * 1e-6
    roof_s = roofline.roofline_s(flops, nbytes, ceilings)
    compute = roofline.compute_ceiling(ceilings)
    totals = CallTotals(
        duration_us=seconds * 1e6,
        flops=flops,
        bytes=nbytes,
        gbps=nbytes / seconds / 1e9 if seconds else None,
        gflops=flops / seconds / 1e9 if seconds else None,
        fraction_of_copy_bandwidth=_ratio(nbytes / seconds, ceilings.copy_bytes_s) if seconds else None,
        fraction_of_compute_ceiling=_ratio(flops / seconds, compute) if seconds else None,
        roofline_us=roof_s * 1e6 if roof_s is not None else None,
        sol=roof_s / seconds if roof_s is not None and seconds else None,
        bound_by=roofline.bound_by(flops, nbytes, ceilings),
    )
    result = Profile(
        problem=problem,
        benchmark=benchmark,
        sizes=sizes,
        kernels=kernels,
        harness_kernels_left_out=len(launched) - len(ours),
        totals=totals,
        ceilings=Ceiling(
            copy_gbps=ceilings.copy_bytes_s / 1e9 if ceilings.copy_bytes_s else None,
            fp32_gflops=ceilings.fp32_flops_s / 1e9 if ceilings.fp32_flops_s else None,
            sgemm_gflops=ceilings.sgemm_flops_s / 1e9 if ceilings.sgemm_flops_s else None,
            hgemm_gflops=ceilings.hgemm_flops_s / 1e9 if ceilings.hgemm_flops_s else None,
            source=ceilings.source,
        ),
        **facts,
    )
    result.advice = advice.for_call(result)
    return result
