"""`grader profile PROBLEM FILE`: why a kernel is slow, from Nsight Compute (docs/profile.md).

The submission is compiled and one call of a benchmark runs under ncu in the sandbox; the command prints each
kernel's figures and the advice (`--json`: the Profile of docs/profile.schema.json; `--raw PATH`: the .ncu-rep
kept for the Nsight Compute GUI). Where nothing can be profiled (no GPU, no ncu, counters refused by the driver,
ncu blocked by the sandbox) it says why and exits 1. `--schema` prints the JSON schema of the output.
`print_profile` is also what `grader submit --profile` shows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.text import Text

from grader.cli import args, output

if TYPE_CHECKING:
    from grader.profile.model import Profile


def _pct(value: float | None, digits: int = 0) -> str:
    return "—" if value is None else f"{value:.{digits}f}%"


def _frac(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None, fmt: str = "{:,.1f}") -> str:
    return "—" if value is None else fmt.format(value)


def print_profile(profile: Profile) -> None:
    """The profile as a table of kernels, the call's totals and the advice."""
    t = profile.totals
    columns = [
        output.Column("kernel", wrap=True),
        output.Column("time µs", justify="right"),
        output.Column("mem SOL", justify="right"),
        output.Column("SM SOL", justify="right"),
        output.Column("DRAM GB/s (of copy)", justify="right", drop=3),
        output.Column("FP32 GFLOP/s (of FMA)", justify="right", drop=3),
        output.Column("occupancy (limit)", justify="right", drop=2),
        output.Column("regs", justify="right", drop=2),
        output.Column("smem B", justify="right", drop=3),
        output.Column("spill B", justify="right", drop=1),
        output.Column("L1/L2 hit", justify="right", drop=3),
        output.Column("load B·eff", justify="right", drop=2),
        output.Column("top stalls", wrap=True, drop=1),
    ]
    rows = []
    for k in profile.kernels:
        occ = k.occupancy
        rows.append(
            [
                k.name.split("(", 1)[0],
                _num(k.duration_us),
                _pct(k.memory_sol_pct),
                _pct(k.compute_sol_pct),
                f"{_num(k.dram_gbps, '{:,.0f}')} ({_frac(k.dram_fraction_of_copy)})",
                f"{_num(k.fp32_gflops, '{:,.0f}')} ({_frac(k.fp32_fraction)})",
                f"{_pct(occ.achieved_pct)}/{_pct(occ.theoretical_pct)}" + (f" ({occ.limiter})" if occ.limiter else ""),
                _num(k.registers_per_thread, "{:d}"),
                _num(k.shared_memory_per_block_bytes, "{:,d}"),
                _num(k.local_memory_bytes, "{:,.0f}"),
                f"{_pct(k.l1_hit_pct)}/{_pct(k.l2_hit_pct)}",
                f"{_num(k.global_load_bytes_per_instruction, '{:.0f}')}·{_pct(k.global_load_sector_efficiency_pct)}",
                ", ".join(f"{s.reason} {s.share:.0%}" for s in k.stalls),
            ]
        )
    title = f"{profile.problem} {profile.benchmark} on {profile.device or 'this GPU'}: one call under Nsight Compute"
    caption = (
        f"{len(profile.kernels)} kernel launch(es), {t.duration_us:,.1f} µs; roofline {_num(t.roofline_us)} µs; "
        f"SOL {_frac(t.sol)} ({t.bound_by}-bound); useful {_num(t.gbps, '{:,.0f}')} GB/s "
        f"({_frac(t.fraction_of_copy_bandwidth)} of copy), {_num(t.gflops, '{:,.0f}')} GFLOP/s "
        f"({_frac(t.fraction_of_compute_ceiling)} of compute); "
        f"{profile.harness_kernels_left_out} harness kernel(s) left out"
    )
    output.console.print(output.fitted_table(columns, rows, title=title, caption=caption))
    for sentence in profile.advice:
        output.console.print(Text.assemble(("advice: ", "bold"), sentence))
    said = " ".join(profile.advice)
    for k in profile.kernels:
        for sentence in (s for s in k.advice if s not in said):  # what the headline did not already say
            output.console.print(Text.assemble((f"{k.name.split('(', 1)[0]}: ", "dim"), sentence))
    if profile.raw_report:
        output.console.print(
            f"report kept for the Nsight Compute GUI: {profile.raw_report} (ncu-ui {profile.raw_report})"
        )
    output.console.print(Text(profile.note, "dim"))


def profile_command(
    problem: str | None = typer.Argument(None, metavar="PROBLEM", help="The problem (see: grader list)."),
    file: Path | None = typer.Argument(None, show_default=False, help="The CUDA solution (.cu)."),
    benchmark: str | None = typer.Option(
        None, "--benchmark", metavar="NAME", help="Which benchmark (default: the first)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the profile as JSON (docs/profile.schema.json)."),
    raw: Path | None = typer.Option(None, "--raw", metavar="PATH", help="Keep ncu's .ncu-rep report here."),
    reference: bool = typer.Option(False, "--reference", help="Profile the problem's best reference solution."),
    unsandboxed: bool = typer.Option(
        False, "--unsandboxed", help="Run ncu outside the sandbox: reference solutions (solutions/<slug>/) only."
    ),
    schema: bool = typer.Option(False, "--schema", help="Print the JSON schema of --json's output and exit."),
    show: Path | None = typer.Option(
        None, "--show", metavar="JSON", help="Print a profile saved with --json as the table, and exit."
    ),
    export_run: Path | None = typer.Option(
        None,
        "--export-run",
        metavar="DIR",
        help="Also write the harness, the library, the request and ncu's CSV here (to rerun ncu by hand).",
    ),
):
    """Profile one call of a benchmark with Nsight Compute: per-kernel figures, roofline, advice."""
    if schema:
        from grader.profile.model import schema_text

        output.plain(schema_text().rstrip("\n"))
        return
    if show is not None:
        _show(show)
        return
    if problem is None:
        raise output.usage_error("missing PROBLEM: the problem whose benchmark to profile")
    spec = args.problem(problem)
    path = _file(spec, file, reference)
    from grader.profile import session

    if unsandboxed and not _in_ladder(spec, path):
        raise output.usage_error(
            "--unsandboxed runs the code outside the sandbox, so only reference solutions (solutions/"
            f"{spec.slug}/) may use it; {path} is not one"
        )
    try:
        session.benchmark(spec, benchmark)
    except ValueError as error:
        raise output.usage_error(str(error))
    try:
        if as_json:
            result = session.profile_submission(
                spec,
                path.read_bytes(),
                path.name,
                benchmark_name=benchmark,
                raw=raw,
                unsandboxed=unsandboxed,
                export_dir=export_run,
            )
        else:
            with output.console.status(f"profiling {path.name} under Nsight Compute"):
                result = session.profile_submission(
                    spec,
                    path.read_bytes(),
                    path.name,
                    benchmark_name=benchmark,
                    raw=raw,
                    unsandboxed=unsandboxed,
                    export_dir=export_run,
                )
    except session.ProfileError as error:
        if as_json:
            output.print_json({"status": "profile_error", "message": str(error)})
        output.errors.print(Text.assemble(("cannot profile:", "red"), " ", str(error)))
        raise typer.Exit(1)
    if as_json:
        output.print_json(json.loads(result.model_dump_json()))
        return
    print_profile(result)


def print_stored(data: dict) -> None:
    """A profile kept with a verdict, as the table (a warning if it does not fit the model)."""
    from pydantic import ValidationError

    from grader.profile.model import Profile

    try:
        print_profile(Profile.model_validate(data))
    except ValidationError as error:
        output.warning(f"the stored profile cannot be shown: {error.errors()[0]['msg']}")


def _show(path: Path) -> None:
    from pydantic import ValidationError

    from grader.profile.model import Profile

    try:
        print_profile(Profile.model_validate_json(path.read_text()))
    except (OSError, ValidationError) as error:
        raise output.usage_error(f"{path} is not a profile saved with grader profile --json: {error}")


def _file(spec, file: Path | None, reference: bool) -> Path:
    from grader.tracks import cuda  # Nsight Compute profiles the CUDA track's kernels

    if file is not None:
        path = args.source_file(file)
    elif reference:
        from grader.problems import solutions

        path = solutions.best(spec.slug, cuda.NAME)
    else:
        raise output.usage_error(f"missing FILE: the .cu solution of {spec.slug} to profile (or --reference)")
    if path.suffix not in cuda.TRACK.extensions:
        raise output.usage_error(f"{path.name} is not a CUDA file (.cu): only CUDA kernels can be profiled")
    return path


def _in_ladder(spec, path: Path) -> bool:
    from grader.problems.catalog import REPO_ROOT

    return path.resolve().parent == (REPO_ROOT / "solutions" / spec.slug).resolve()


def register(app: typer.Typer) -> None:
    app.command("profile")(profile_command)
