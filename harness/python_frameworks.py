"""What the Python worker needs of each track's framework: start CUDA, see a device address as the arrays `solve`
receives (zero copies), time a call with CUDA events on the stream solve is called on (whose handle the worker
gives harness/cuda_vmm.py, for the GATE and DONE words around the call), wait for the device, and the
calibration's stand-in work (read every input word, write every output word; keep the GPU busy a while).

    triton  PyTorch tensors (torch.as_tensor of an object with __cuda_array_interface__), torch.cuda events
    cupy    CuPy arrays (cupy.cuda.UnownedMemory over the address), cupy.cuda events

Each array covers exactly its buffer of the call in progress: nothing else of the shared region is reachable
through it. The framework is imported here, before the submission is loaded and the sandbox's filter is on.
"""

from __future__ import annotations

import functools
import os
import platform
from typing import Any

from harness import cuda_vmm

# the request's element tokens as __cuda_array_interface__ typestrs; bfloat16 and fp8 travel as their raw bits
TYPESTRS = {"f32": "<f4", "f16": "<f2", "bf16": "<i2", "i32": "<i4", "i8": "|i1", "e4m3": "|u1"}
ELEMENT_BYTES = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i8": 1, "e4m3": 1}
VIEWS = {"bf16": "bfloat16", "e4m3": "float8_e4m3fn"}  # torch types that travel as raw bits of their width


class _Interface:
    """A device buffer described by __cuda_array_interface__ (version 3; no stream to wait for)."""

    def __init__(self, address: int, shape: tuple[int, ...], token: str):
        self.__cuda_array_interface__ = {
            "shape": shape,
            "typestr": TYPESTRS[token],
            "data": (address, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }


class _StreamWords:
    """The GATE and DONE words around a call, on the stream a framework's `stream` names."""

    driver: cuda_vmm.Driver

    def stream(self) -> int:
        raise NotImplementedError

    def wait_word(self, address: int, value: int) -> None:
        """Hold the work queued on the stream from now on until the 32-bit word at device `address` reaches `value`."""
        cuda_vmm.wait_value32(self.stream(), address, value, self.driver)

    def write_word(self, address: int, value: int) -> None:
        """`value` into the 32-bit word at device `address`, on the stream, after the work queued on it."""
        cuda_vmm.write_value32(self.stream(), address, value, self.driver)


class TorchFramework(_StreamWords):
    """The triton track: PyTorch tensors, torch.cuda events."""

    def __init__(self) -> None:
        import torch

        self.torch = torch
        torch.cuda.set_device(0)
        torch.zeros(1, device="cuda")  # the primary context, current on this thread (cuda_vmm needs it)
        # Where Triton's launcher links libcuda from: the driver this process loaded, so that Triton never runs
        # ldconfig to find it (the sandbox executes only the JIT's own programs: landlock.jit_programs).
        folder = loaded_library_folder("libcuda.so")
        if folder:
            os.environ.setdefault("TRITON_LIBCUDA_PATH", folder)
        remember_platform_architecture()
        self.driver = cuda_vmm.Driver()

    def array(self, address: int, shape: tuple[int, ...], token: str) -> Any:
        tensor = self.torch.as_tensor(_Interface(address, shape, token), device="cuda")
        return tensor.view(getattr(self.torch, VIEWS[token])) if token in VIEWS else tensor

    def event(self) -> Any:
        return self.torch.cuda.Event(enable_timing=True)

    def record(self, event: Any) -> None:
        event.record(self.torch.cuda.current_stream())

    def stream(self) -> int:
        """The CUstream handle `record` records on."""
        return self.torch.cuda.current_stream().cuda_stream or cuda_vmm.CU_STREAM_LEGACY

    def synchronize_device(self) -> None:
        self.torch.cuda.synchronize()

    def wait(self, event: Any) -> None:
        event.synchronize()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end))

    def touch(self, address: int, words: int, write: bool) -> None:
        words_view = self.array(address, (words,), "i32")
        if write:
            words_view.zero_()
        else:
            words_view.sum()  # reads every word; the result stays on the device (no wait)

    def spin(self, microseconds: int) -> None:
        # clock cycles, at the 2 GHz no current GPU exceeds: at least that long (the supervisor uses the
        # call's measured time, not this)
        self.torch.cuda._sleep(2000 * microseconds)


class CupyFramework(_StreamWords):
    """The cupy track: CuPy arrays over unowned memory, cupy.cuda events."""

    TOUCH = r"""
    extern "C" __global__ void touch(unsigned* p, unsigned long long words, int write, unsigned* sink) {
        unsigned acc = 0;
        for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < words;
             i += (unsigned long long)gridDim.x * blockDim.x) {
            if (write) p[i] = 0; else acc ^= p[i];
        }
        if (acc == 0x7eadbeef) *sink = acc;
    }"""
    SPIN = r"""
    extern "C" __global__ void spin(unsigned long long ns) {
        unsigned long long start, now;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
        do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); while (now - start < ns);
    }"""

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy
        cupy.cuda.Device(0).use()
        cupy.cuda.runtime.free(0)  # the primary context, current on this thread
        self._touch = cupy.RawKernel(self.TOUCH, "touch")
        self._sink = cupy.zeros(1, dtype=cupy.uint32)
        self._spin = cupy.RawKernel(self.SPIN, "spin")
        self._touch.compile()  # NVRTC now, before any submission code and before the sandbox's filter
        self._spin.compile()
        self.driver = cuda_vmm.Driver()

    def array(self, address: int, shape: tuple[int, ...], token: str) -> Any:
        cupy = self.cupy
        dtype = {
            "f32": cupy.float32,
            "f16": cupy.float16,
            "bf16": cupy.uint16,
            "i32": cupy.int32,
            "i8": cupy.int8,
            "e4m3": cupy.uint8,
        }[token]
        count = 1
        for extent in shape:
            count *= extent
        memory = cupy.cuda.UnownedMemory(address, count * ELEMENT_BYTES[token], None, 0)
        return cupy.ndarray(shape, dtype, cupy.cuda.MemoryPointer(memory, 0))

    def event(self) -> Any:
        return self.cupy.cuda.Event()

    def record(self, event: Any) -> None:
        event.record(self.cupy.cuda.get_current_stream())

    def stream(self) -> int:
        """The CUstream handle `record` records on."""
        return self.cupy.cuda.get_current_stream().ptr or cuda_vmm.CU_STREAM_LEGACY

    def synchronize_device(self) -> None:
        self.cupy.cuda.runtime.deviceSynchronize()

    def wait(self, event: Any) -> None:
        event.synchronize()

    def elapsed_ms(self, start: Any, end: Any) -> float:
        return float(self.cupy.cuda.get_elapsed_time(start, end))

    def touch(self, address: int, words: int, write: bool) -> None:
        cupy = self.cupy
        self._touch((1024,), (256,), (cupy.uint64(address), cupy.uint64(words), cupy.int32(write), self._sink))

    def spin(self, microseconds: int) -> None:
        self._spin((1,), (1,), (self.cupy.uint64(1000 * microseconds),))


def loaded_library_folder(prefix: str, maps: str = "/proc/self/maps") -> str:
    """The folder of the first library this process has mapped whose file name starts with `prefix`; '' if none."""
    with open(maps) as lines:
        for line in lines:
            fields = line.split(maxsplit=5)  # address perms offset dev inode [path]
            path = fields[5].strip() if len(fields) == 6 else ""
            if os.path.basename(path).startswith(prefix):
                return os.path.dirname(path)
    return ""


def remember_platform_architecture() -> None:
    """Answer platform.architecture() now and from memory afterwards: it runs the `file` program on the
    interpreter, and Triton asks it to key its launcher's cache (triton.runtime.build.platform_key), so inside
    solve it would start a program that is not the JIT's (refused: landlock.jit_programs)."""
    if not hasattr(platform.architecture, "cache_info"):  # not yet wrapped
        platform.architecture = functools.lru_cache(maxsize=None)(platform.architecture)
    platform.architecture()


def start(track: str) -> TorchFramework | CupyFramework:
    """The track's framework, with CUDA started on device 0."""
    return TorchFramework() if track == "triton" else CupyFramework()
