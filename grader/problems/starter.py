"""Starter files for `grader init`: the problem's signature, its shapes and element types, and a TODO, per track
(the Python tracks' starters also state what the track may use); the track's own lines are its `starter`
(grader/tracks/)."""

from grader import tracks
from grader.problems import dtypes
from grader.problems.spec import Problem

_ELEMENT_NAMES = {
    "f32": "float32",
    "f16": "float16",
    "bf16": "bfloat16",
    "i32": "int32",
    "i8": "int8",
    "e4m3": "fp8e4m3",
}


def starter(problem: Problem, track: str) -> str:
    chosen = tracks.get(track)
    if chosen.python is not None:
        return _python_starter(problem, chosen)
    includes, note = chosen.starter.header, chosen.starter.note
    tokens = {p.dtype for p in problem.pointer_params}
    shapes = "\n".join(
        f"//   {p.name:<8} {p.role:<6} {_ELEMENT_NAMES[p.dtype]:<8} {' x '.join(str(d) for d in p.dims)}"
        for p in problem.pointer_params
    )
    accumulation = f"// Accumulation: {problem.accumulation}\n" if problem.accumulation else ""
    raw_bits = (
        "// On the CPU track float16 and bfloat16 buffers hold raw bits (uint16_t), fp8 e4m3 ones raw bits (uint8_t):\n"
        "// convert with the helpers below.\n"
        if chosen.compiled and chosen.compiled.raw_float_bits and tokens & {"f16", "bf16", "e4m3"}
        else ""
    )
    return (
        f"// {problem.title} ({track} track): kerneljudge starter.\n"
        f"// Row-major arrays:\n{shapes}\n{accumulation}{raw_bits}"
        f"// Check it with: grader test {problem.slug} <this file>; time it with: grader submit ...\n"
        f"{includes}{dtypes.includes(tokens, track)}\n"
        f"{problem.prototype(track=track)} {{\n"
        f"    // TODO: compute the outputs. {note}\n"
        f"}}\n"
    )


def _python_starter(problem: Problem, chosen: tracks.Track) -> str:
    assert chosen.python is not None
    track = chosen.name
    shapes = "\n".join(
        f"#   {p.name:<8} {p.role:<6} {dtypes.python_dtype(p.dtype, track):<15} {' x '.join(str(d) for d in p.dims)}"
        for p in problem.pointer_params
    )
    accumulation = f"# Accumulation: {problem.accumulation}\n" if problem.accumulation else ""
    rules = "\n".join(f"# {line}" for line in chosen.python.rules.summary.splitlines())
    return (
        f"# {problem.title} ({track} track): kerneljudge starter.\n"
        f"# Contiguous, row-major arrays on the GPU; inputs are read-only, write every element of the outputs:\n"
        f"{shapes}\n{accumulation}"
        f"# Check it with: grader test {problem.slug} <this file>; time it with: grader submit ...\n#\n"
        f"{rules}\n"
        f"{chosen.starter.header}\n\n"
        f"{problem.prototype(track=track)}:\n"
        f"    # TODO: compute the outputs: {chosen.starter.note}.\n"
        f"    pass\n"
    )
