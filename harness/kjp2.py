"""KJP2, the supervisor's protocol (grader/boundary/protocol.h), for the Python worker: the same fixed-size messages,
byte for byte, packed with struct in the machine's own layout (native sizes and alignment, as the C structs).

    Go    magic u32, kind u32, call u64, buffers u32, ints u32, offsets u64[16], values i32[16], sets u32,
          outputs u32, set_stride u64, spin_us u32, mark u32                                (240 bytes)
    Reply magic u32, kind u32, call u64, call_ms f64, tail_ms f64                            (32 bytes)

A Go arrives in one SEQPACKET packet, MAP with one file descriptor (SCM_RIGHTS), the device memory's, in which
offsets[0] is the DONE word and offsets[1] the GATE word; a packet of another size or magic, or with more
descriptors than that, is a protocol error. This module only packs, unpacks and moves
messages: what they mean is harness/python_worker.py's.
"""

from __future__ import annotations

import array
import os
import socket
import struct
from dataclasses import dataclass

MAGIC = 0x4B4A5032  # "KJP2"
MAX_BUFFERS = 16
MAX_INTS = 16
MAX_FDS = 1  # MAP's: the device memory
LOADED, CALL, EMPTY, DONE, EXIT, MAP, MAPPED, LOAD, READY = 1, 2, 3, 4, 5, 6, 7, 8, 9

GO = struct.Struct(f"@IIQII{MAX_BUFFERS}Q{MAX_INTS}iIIQII")
REPLY = struct.Struct("@IIQdd")


class ProtocolError(Exception):
    """A message that is not a KJP2 Go (wrong size or magic, or more file descriptors than MAP brings)."""


@dataclass(frozen=True)
class Go:
    kind: int
    call: int = 0
    buffers: int = 0
    ints: int = 0
    offsets: tuple[int, ...] = (0,) * MAX_BUFFERS  # MAP: offsets[0] is the DONE word's, in the region
    values: tuple[int, ...] = (0,) * MAX_INTS
    sets: int = 0
    outputs: int = 0  # EMPTY: bit j set if buffer j is an output
    set_stride: int = 0  # bytes between two sets; MAP: the region's size
    spin_us: int = 0  # EMPTY: then keep the GPU busy this long (the calibration's longer calls)
    mark: int = 0  # CALL/EMPTY: the value GATE reaches before the work and the worker writes into DONE after it

    def pack(self) -> bytes:
        return GO.pack(
            MAGIC, self.kind, self.call, self.buffers, self.ints, *self.offsets, *self.values, self.sets,
            self.outputs, self.set_stride, self.spin_us, self.mark,
        )  # fmt: skip

    @classmethod
    def unpack(cls, data: bytes) -> Go:
        if len(data) != GO.size:
            raise ProtocolError(f"a message of {len(data)} bytes, not {GO.size}")
        fields = GO.unpack(data)
        if fields[0] != MAGIC:
            raise ProtocolError("a message without the KJP2 magic")
        kind, call, buffers, ints = fields[1:5]
        offsets = tuple(fields[5 : 5 + MAX_BUFFERS])
        values = tuple(fields[5 + MAX_BUFFERS : 5 + MAX_BUFFERS + MAX_INTS])
        sets, outputs, set_stride, spin_us, mark = fields[5 + MAX_BUFFERS + MAX_INTS :]
        return cls(kind, call, buffers, ints, offsets, values, sets, outputs, set_stride, spin_us, mark)


def pack_reply(kind: int, call: int, call_ms: float = 0.0, tail_ms: float = 0.0) -> bytes:
    return REPLY.pack(MAGIC, kind, call, call_ms, tail_ms)


def unpack_reply(data: bytes) -> tuple[int, int, float, float]:
    """(kind, call, call_ms, tail_ms) of a Reply."""
    if len(data) != REPLY.size:
        raise ProtocolError(f"a reply of {len(data)} bytes, not {REPLY.size}")
    magic, kind, call, call_ms, tail_ms = REPLY.unpack(data)
    if magic != MAGIC:
        raise ProtocolError("a reply without the KJP2 magic")
    return kind, call, call_ms, tail_ms


def receive(control: socket.socket) -> tuple[Go, tuple[int, ...]] | None:
    """The next Go and the file descriptors that came with it, in order (only MAP brings any); None when the
    supervisor left."""
    fds = array.array("i")
    data, ancillary, flags, _address = control.recvmsg(
        GO.size + 1, socket.CMSG_SPACE(MAX_FDS * fds.itemsize), socket.MSG_CMSG_CLOEXEC
    )
    if not data:
        return None
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    if flags & socket.MSG_CTRUNC or len(fds) > MAX_FDS:  # the control space is rounded up: it may hold more
        for fd in fds:
            os.close(fd)
        raise ProtocolError(f"a message with more than {MAX_FDS} file descriptor(s)")
    return Go.unpack(data), tuple(fds)


def send_reply(control: socket.socket, kind: int, call: int, call_ms: float = 0.0, tail_ms: float = 0.0) -> bool:
    """Send one Reply; False when the supervisor is gone."""
    try:
        return control.send(pack_reply(kind, call, call_ms, tail_ms)) == REPLY.size
    except OSError:
        return False
