"""An exception the Python worker caught, as one paragraph in the user's terms: the line of the submission file
it came from and the framework's own message, with none of the worker's or the framework's frames.

    Triton's CompilationError         the line of the submission (from the @triton.jit function's source and the
                                      node Triton names) and Triton's message
    CuPy's CompileException (NVRTC)   the line within the kernel's source string, its text, and NVRTC's message
    Triton's OutOfResources           the resource, what the kernel needs and the GPU's limit
    a launch CUDA refused (CuPy)      the resource, with the kernel's attributes and the device's limits read back
    anything else                     its type and message, at the innermost line of the submission

Exceptions are recognised by their class's name and module along the MRO, so nothing here imports Triton or CuPy:
the worker has imported its track's framework already (harness/python_frameworks.py).
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from types import FrameType
from typing import Any

MESSAGE_CHARS = 1500  # a verdict's message is one sentence a person reads, not a log
NVRTC_DIAGNOSTIC = re.compile(r"^(?:.*?)\((\d+)\): (error|catastrophic error|warning)(?: #[\w-]+)?: (.*)$")
TRITON_LAUNCH = "Triton Error [CUDA]: "
FRAMEWORK_ERRORS = (
    ("triton", "CompilationError"),
    ("triton", "OutOfResources"),
    ("cupy", "CompileException"),
    ("cupy", "CUDADriverError"),  # cupy_backends.cuda.api.driver
    ("cupy", "CUDARuntimeError"),
)
UNITS = {"shared memory": "bytes", "tensor memory": "columns", "threads": "threads"}


def is_a(value: object, module: str, name: str) -> bool:
    """Whether `value` (an exception, a kernel) is an instance of the class `name` defined in a module under
    `module`."""
    return any(c.__name__ == name and c.__module__.startswith(module) for c in type(value).__mro__)


def describe(error: BaseException, submission: str, during: str) -> str:
    """`error`, raised `during` ("while loading" or "in solve") by the code of the file `submission`, as one line."""
    try:
        text = _describe(error, submission, during)
    except Exception:  # the message must never cost the verdict: the plain form
        text = f"{type(error).__name__} raised {during}: {error}"
    return one_line(text)


def _describe(error: BaseException, submission: str, during: str) -> str:
    frame = user_frame(error, submission)
    where = _where(frame, during)
    if is_a(error, "triton", "CompilationError"):
        return triton_compile_error(error, submission, where)
    if is_a(error, "triton", "OutOfResources"):
        return out_of_resources(error, where)
    if is_a(error, "cupy", "CompileException"):
        return nvrtc_error(error, where)
    launch = launch_refused(error, frame, submission, where)
    if launch:
        return launch
    return f"{type(error).__name__} raised {where}: {error}"


def _framework_error(error: BaseException) -> bool:
    """Whether `error` is one the frameworks raise for a kernel (its message is all the user needs)."""
    return any(is_a(error, module, name) for module, name in FRAMEWORK_ERRORS) or str(error).startswith(TRITON_LAUNCH)


def one_line(text: str) -> str:
    """Whitespace, newlines included, as single spaces, cut to MESSAGE_CHARS."""
    text = " ".join(text.split())
    return text if len(text) <= MESSAGE_CHARS else text[: MESSAGE_CHARS - 3] + "..."


def user_frame(error: BaseException, submission: str) -> tuple[int, FrameType] | None:
    """(line, frame) of the innermost frame of `error`'s traceback that runs code of the file `submission`."""
    found = None
    wanted = os.path.realpath(submission)
    tb = error.__traceback__
    while tb is not None:
        if os.path.realpath(tb.tb_frame.f_code.co_filename) == wanted:
            found = (tb.tb_lineno, tb.tb_frame)
        tb = tb.tb_next
    return found


def _where(frame: tuple[int, FrameType] | None, during: str) -> str:
    return f"{during}, at line {frame[0]} of the submission" if frame else during


def user_traceback(error: BaseException, submission: str) -> str:
    """The traceback of `error` cut to the frames of the file `submission` (none of the worker's or a library's),
    for the run's output; '' for the errors `describe` says in full (a compile error, a resource)."""
    if _framework_error(error):
        return ""
    wanted = os.path.realpath(submission)
    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.realpath(f.filename) == wanted]
    if not frames:
        return ""
    lines = ["Traceback (the submission's frames only):\n", *traceback.format_list(frames)]
    return "".join(lines + traceback.format_exception_only(type(error), error))


# --- Triton ---------------------------------------------------------------------------------------------------


def triton_compile_error(error: BaseException, submission: str, where: str) -> str:
    """A CompilationError: Triton wraps an error inside a called @triton.jit function in one at the call, so the
    chain of causes is walked; its innermost message is Triton's, its innermost link in the submission the line."""
    chain: list[Any] = []
    link: BaseException | None = error
    while link is not None and is_a(link, "triton", "CompilationError") and len(chain) < 64:
        chain.append(link)
        link = link.__cause__ or link.__context__
    said = next((c.error_message for c in reversed(chain) if getattr(c, "error_message", None)), None)
    if not said and link is not None:
        said = f"{type(link).__name__}: {link}"
    lines = _read_lines(submission)
    located = "a @triton.jit function"
    for compiled in reversed(chain):
        line = _jit_line(getattr(compiled, "src", None), getattr(compiled, "node", None), lines)
        if line:
            function = re.match(r"\s*def\s+(\w+)", compiled.src)
            named = function.group(1) if function else "a @triton.jit function"
            located = f"{named}, line {line} of the submission (`{lines[line - 1].strip()}`)"
            break
    return f"Triton could not compile {located}: {said or 'no message'} (launched {where})"


def _read_lines(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as file:
            return file.read().splitlines()
    except OSError:
        return []


def _jit_line(src: object, node: object, lines: list[str]) -> int | None:
    """The submission's line (1-based) of `node` in a @triton.jit function whose source (from its `def`, dedented,
    as Triton keeps it) is `src`, found by matching the source's lines in the file; None if it is not there."""
    lineno = getattr(node, "lineno", None)
    if not isinstance(src, str) or not isinstance(lineno, int) or not src.strip():
        return None
    wanted = [line.strip() for line in src.split("\n")]
    best, best_score = None, 0
    for start, line in enumerate(lines):
        if line.strip() != wanted[0]:
            continue
        score = sum(1 for a, b in zip(wanted, lines[start:]) if a == b.strip())
        if score > best_score:
            best, best_score = start, score
    if best is None or best + lineno > len(lines):
        return None
    return best + lineno


def out_of_resources(error: Any, where: str) -> str:
    """Triton's OutOfResources: its own phrase ("out of resource: shared memory"), then the three facts."""
    name, required, limit = error.name, error.required, error.limit
    unit = UNITS.get(name, "")
    return (
        f"out of resource: {name} {where}: the kernel needs {required} {unit}, the GPU's limit is {limit} {unit} "
        f"(smaller blocks or fewer pipeline stages, num_stages, need less)"
    )


# --- CuPy -----------------------------------------------------------------------------------------------------


def nvrtc_error(error: Any, where: str) -> str:
    """A CompileException: NVRTC's log names lines of the kernel's source as `<file>(7): error: ...` (the file is
    CuPy's temporary name), so the line is the kernel's and its text is quoted from the source CuPy compiled."""
    log = str(error)
    source = getattr(error, "source", None)
    source_lines = source.split("\n") if isinstance(source, str) else []
    errors = []
    for line in log.splitlines():
        found = NVRTC_DIAGNOSTIC.match(line.strip())
        if found and found.group(2) != "warning":
            errors.append((int(found.group(1)), found.group(2), found.group(3)))
    compiler = str(getattr(error, "backend", "nvrtc")).upper()
    if not errors:
        first = next((line.strip() for line in log.splitlines() if line.strip()), "no message")
        return f"{compiler} could not compile the kernel: {first} (compiled {where})"
    number, kind, said = errors[0]
    text = source_lines[number - 1].strip() if 0 < number <= len(source_lines) else ""
    quoted = f" (`{text}`)" if text else ""
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    located = f"the kernel's line {number}{quoted}"
    return f"{compiler} could not compile the kernel: {located}: {kind}: {said}{more} (compiled {where})"


def launch_refused(error: BaseException, frame: tuple[int, FrameType] | None, submission: str, where: str) -> str:
    """A launch CUDA refused for its resources ('' for any other error): too many registers for the block
    (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES), or shared memory, a block or a grid beyond a limit
    (CUDA_ERROR_INVALID_VALUE), with the figures that can be read back: the kernel's attributes where the line
    names a RawKernel (`frame`: the submission's innermost, as user_frame finds it), the device's limits where CuPy
    is loaded."""
    said = str(error)
    cuda_error = is_a(error, "cupy", "CUDADriverError") or is_a(error, "cupy", "CUDARuntimeError")
    if said.startswith(TRITON_LAUNCH):
        said = said.removeprefix(TRITON_LAUNCH)
    elif not cuda_error:
        return ""
    kernel = _kernel_on_line(frame, _read_lines(submission)) if frame else None
    attributes = _attributes(kernel)
    device = _device_limits()
    name = f"kernel {getattr(kernel, 'name', '')} " if kernel is not None else "kernel "
    if "LAUNCH_OUT_OF_RESOURCES" in said or "too many resources requested for launch" in said:
        facts = []
        if "num_regs" in attributes:
            facts.append(f"the {name}uses {attributes['num_regs']} registers a thread")
        if "max_threads_per_block" in attributes:
            facts.append(f"so a block of it may have at most {attributes['max_threads_per_block']} threads")
        if "regsPerBlock" in device:
            facts.append(f"the GPU has {device['regsPerBlock']} registers a block")
        detail = ", ".join(facts) if facts else "the block asks for more registers than the GPU has for it"
        return f"out of resources: registers {where}: {detail} (launch smaller blocks)"
    if "INVALID_VALUE" in said or "invalid argument" in said:
        facts = []
        if "shared_size_bytes" in attributes:
            facts.append(f"the {name}uses {attributes['shared_size_bytes']} bytes of static shared memory")
        if "max_dynamic_shared_size_bytes" in attributes:
            facts.append(
                f"may be given {attributes['max_dynamic_shared_size_bytes']} bytes of dynamic shared memory "
                "(its max_dynamic_shared_size_bytes)"
            )
        if "sharedMemPerBlock" in device:
            optin = device.get("sharedMemPerBlockOptin", device["sharedMemPerBlock"])
            facts.append(
                f"the GPU allows {device['sharedMemPerBlock']} bytes a block, {optin} with "
                "max_dynamic_shared_size_bytes raised"
            )
        if "maxThreadsPerBlock" in device:
            facts.append(f"and {device['maxThreadsPerBlock']} threads a block")
        detail = "; ".join(facts) if facts else "the shared memory, block or grid asked for is beyond the GPU's limit"
        return f"the launch was refused {where} ({said}): shared memory, a block or a grid beyond a limit: {detail}"
    return ""


def _kernel_on_line(frame: tuple[int, FrameType], lines: list[str]) -> Any:
    """The one cupy RawKernel a name on the frame's line refers to (its locals, then its globals); None if not one."""
    number, code = frame
    text = lines[number - 1] if 0 < number <= len(lines) else ""
    found = []
    for name in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", text)):
        value = code.f_locals.get(name, code.f_globals.get(name))
        if is_a(value, "cupy", "RawKernel"):
            found.append(value)
    return found[0] if len(found) == 1 else None


def _attributes(kernel: Any) -> dict[str, int]:
    if kernel is None:
        return {}
    try:
        return {k: v for k, v in dict(kernel.attributes).items() if isinstance(v, int) and v >= 0}
    except Exception:  # a kernel that cannot be read back: its figures are not said
        return {}


def _device_limits() -> dict[str, int]:
    """The current device's limits, from the CuPy this process loaded ({} where none is)."""
    cupy = sys.modules.get("cupy")
    if cupy is None:
        return {}
    try:
        runtime = cupy.cuda.runtime
        properties = runtime.getDeviceProperties(runtime.getDevice())
    except Exception:  # a device that cannot be asked: its figures are not said
        return {}
    keys = ("regsPerBlock", "sharedMemPerBlock", "sharedMemPerBlockOptin", "maxThreadsPerBlock")
    return {k: properties[k] for k in keys if isinstance(properties.get(k), int)}
