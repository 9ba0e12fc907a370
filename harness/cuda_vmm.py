"""The supervisor's device memory in the Python worker: the CUDA driver's virtual-memory calls through ctypes,
fetched as grader/boundary/cuda_driver.h fetches them (cuGetProcAddress for the CUDA 12.0 ABI of each call), so the
worker imports the exported handle, reserves addresses, maps it read-write and releases the handle exactly as
harness/gpu_worker.cu's map_region does; the write of a word of that memory on a stream (the DONE word that ends
a call on the supervisor's clock); and a wait on a stream for a word to reach a value (the GATE word that holds a
call's queued work until the supervisor's GPU raises it). CUDA must already be started in this process (the
framework's primary context current on this thread).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable

CUDA_ABI = 12000  # the version whose signatures these calls have (as cuda_driver.h asks for)
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CU_GET_PROC_ADDRESS_DEFAULT = 0
CU_STREAM_LEGACY = 0x1  # the legacy default stream, named so (a stream of 0 may mean the per-thread one)
CU_STREAM_WRITE_VALUE_DEFAULT = 0
CU_STREAM_WAIT_VALUE_GEQ = 0x0  # (int32)(*address - value) >= 0: the GATE word's marks only grow


class DriverError(RuntimeError):
    pass


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class Driver:
    """The few driver calls the worker needs, each fetched once and checked: a failure raises DriverError naming
    the step."""

    def __init__(self, library: str = "libcuda.so.1"):
        self._cuda = ctypes.CDLL(library)
        lookup = self._cuda.cuGetProcAddress_v2
        lookup.argtypes = [
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_void_p),
            ctypes.c_int,
            ctypes.c_uint64,
            ctypes.POINTER(ctypes.c_int),
        ]
        self._lookup = lookup
        self._fetched: dict[str, Callable[..., int]] = {}

    def function(self, name: str, *argtypes) -> Callable[..., int]:
        """The driver's `name` with these argument types (each name has one signature), fetched on first use."""
        if name not in self._fetched:
            self._fetched[name] = self._fetch(name, *argtypes)
        return self._fetched[name]

    def _fetch(self, name: str, *argtypes) -> Callable[..., int]:
        pointer, found = ctypes.c_void_p(), ctypes.c_int(0)
        result = self._lookup(
            name.encode(), ctypes.byref(pointer), CUDA_ABI, CU_GET_PROC_ADDRESS_DEFAULT, ctypes.byref(found)
        )
        if result != 0 or not pointer.value:
            raise DriverError(f"the CUDA driver has no {name}")
        return ctypes.CFUNCTYPE(ctypes.c_int, *argtypes)(pointer.value)

    def check(self, result: int, during: str) -> None:
        if result != 0:
            text = ctypes.c_char_p()
            self.function("cuGetErrorString", ctypes.c_int, ctypes.POINTER(ctypes.c_char_p))(result, ctypes.byref(text))
            said = text.value.decode() if text.value else f"unknown error {result}"
            raise DriverError(f"CUDA error during {during}: {said}")


def map_region(fd: int, size: int, driver: Driver | None = None) -> int:
    """Map the device memory exported as `fd` (closed here) read-write; its device address."""
    driver = driver or Driver()
    handle = ctypes.c_uint64()
    import_handle = driver.function(
        "cuMemImportFromShareableHandle", ctypes.POINTER(ctypes.c_uint64), ctypes.c_void_p, ctypes.c_int
    )
    driver.check(
        import_handle(ctypes.byref(handle), ctypes.c_void_p(fd), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
        "importing the shared buffers",
    )
    os.close(fd)
    base = ctypes.c_uint64()
    reserve = driver.function(
        "cuMemAddressReserve",
        ctypes.POINTER(ctypes.c_uint64),
        ctypes.c_size_t,
        ctypes.c_size_t,
        ctypes.c_uint64,
        ctypes.c_uint64,
    )
    driver.check(reserve(ctypes.byref(base), size, 0, 0, 0), "reserving addresses for the shared buffers")
    memory_map = driver.function(
        "cuMemMap", ctypes.c_uint64, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_uint64, ctypes.c_uint64
    )
    driver.check(memory_map(base, size, 0, handle, 0), "mapping the shared buffers")
    access = _AccessDesc(_Location(CU_MEM_LOCATION_TYPE_DEVICE, 0), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    set_access = driver.function(
        "cuMemSetAccess", ctypes.c_uint64, ctypes.c_size_t, ctypes.POINTER(_AccessDesc), ctypes.c_size_t
    )
    driver.check(set_access(base, size, ctypes.byref(access), 1), "mapping the shared buffers")
    driver.check(driver.function("cuMemRelease", ctypes.c_uint64)(handle), "mapping the shared buffers")
    return base.value


def write_value32(stream: int, address: int, value: int, driver: Driver) -> None:
    """Have `stream` (a CUstream handle) write `value` into the 32-bit word at device `address` when it reaches this
    point: cuStreamWriteValue32, after all the work queued on it before."""
    write = driver.function("cuStreamWriteValue32", ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint)
    driver.check(write(stream, address, value, CU_STREAM_WRITE_VALUE_DEFAULT), "marking the call done")


def wait_value32(stream: int, address: int, value: int, driver: Driver) -> None:
    """Have `stream` (a CUstream handle) hold the work queued on it after this point until the 32-bit word at device
    `address` reaches `value`: cuStreamWaitValue32."""
    wait = driver.function("cuStreamWaitValue32", ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint)
    driver.check(wait(stream, address, value, CU_STREAM_WAIT_VALUE_GEQ), "waiting for the GATE word")
