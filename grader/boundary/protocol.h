// The messages between a trusted supervisor (grader/run/supervisor.cpp, cuda_supervisor.cu) and its untrusted
// worker (harness/worker.cpp, harness/gpu_worker.cu). They travel over a SOCK_SEQPACKET socketpair the grader
// makes: one message per packet, each of a fixed size, so a reader takes exactly one struct and anything else
// is a protocol violation. The buffers themselves never travel: they live in one shared region (a sealed memfd
// on the CPU track; on the CUDA track device memory the supervisor allocates and exports as a file descriptor,
// sent once with MAP), and a Go message names each buffer by its offset in that region.
//
// The region's layout (one set of a case's buffers; grader/run/guards.h fills and checks the guards): each buffer
// in a slot of its own, FENCE | LEAD | the buffer, padded to a whole page | TRAIL, and one more FENCE after the
// last slot. FENCE, LEAD and TRAIL hold a canary the supervisor writes before and checks after every call, so a
// write past either end of a buffer (an unguarded last block writes up to blockDim - 1 elements past it) lands in
// them, never in the next buffer; the CPU worker also makes each FENCE page inaccessible (PROT_NONE) in its own
// mapping, so a write that runs further faults at once. A Go names each buffer by its offset, FENCE + LEAD past
// its slot's start.
//
// CPU track:  worker: LOADED; then CALL/EMPTY -> DONE ... EXIT.
// CUDA track: supervisor: MAP (+ the device memory's fd) -> worker: MAPPED; EMPTY -> READY, DONE
//             (calibration, before any submission code exists in the worker); LOAD -> LOADED; then CALL/EMPTY ->
//             READY, DONE ... EXIT.
//
// The CUDA track's clock (docs/timing.md, "The judge's clock"): a call's work is timed on the GPU by the
// supervisor's own events, ordered against the worker's work by words, never by the worker's clock. Before READY
// each worker queues, on the stream it calls solve on, a wait (cuStreamWaitValue32) for the GATE word (a word of
// the shared device memory, at offsets[1] of MAP) to reach the call's `mark`, an event, solve's launches, an
// event, and the write of `mark` into the DONE word (beside it, at offsets[0] of MAP; cuStreamWriteValue32); a
// READY that does not come in a few milliseconds (a solve waiting for its own gated work) is not waited for. The
// supervisor's stream records its first event, raises GATE, waits for the DONE word (cuStreamWaitValue32) and
// records its second event: the interval holds the worker's work and a calibrated overhead. A worker that
// marks DONE early gains nothing: the supervisor's second event is stamped when its own stream runs, and its
// snapshot of the outputs, taken right after, holds whatever the work had not finished.
#pragma once
#include <cstdint>

namespace kjp {

constexpr uint32_t MAGIC = 0x4b4a5032;  // "KJP2"
constexpr int MAX_BUFFERS = 16;
constexpr int MAX_INTS = 16;
constexpr uint64_t PAGE = 4096;         // every slot and every buffer starts on a page of its own
constexpr uint64_t GUARD_FENCE = 4096;  // one page; the CPU worker maps it PROT_NONE
constexpr uint64_t GUARD_LEAD = 4096;   // canary before a buffer: 1024 float32 elements of underflow
constexpr uint64_t GUARD_TRAIL = 16384;  // canary after the buffer's last page: 4096 float32 elements more

enum Kind : uint32_t {
    LOADED = 1,  // worker -> supervisor: the submission is loaded and kerneljudge_entry was found
    CALL = 2,    // supervisor -> worker: call kerneljudge_entry once per set on the buffers named
    EMPTY = 3,   // supervisor -> worker: answer DONE at once (CUDA: after the calibration kernel over the buffers)
    DONE = 4,    // worker -> supervisor: the call returned
    EXIT = 5,    // supervisor -> worker: leave now, status 0
    MAP = 6,     // supervisor -> worker (CUDA): map the device memory whose fd comes with this
    MAPPED = 7,  // worker -> supervisor (CUDA): mapped
    LOAD = 8,    // supervisor -> worker (CUDA): load the submission now
    READY = 9,   // worker -> supervisor (CUDA): the call's arguments are made (Python: its work queued behind GATE)
};


struct Go {
    uint32_t magic, kind;
    uint64_t call;
    uint32_t buffers, ints;
    uint64_t offsets[MAX_BUFFERS];  // bytes from the start of the shared region (of set 0); MAP: DONE's, GATE's
    int32_t values[MAX_INTS];       // the size arguments, in signature order
    uint32_t sets;                  // CUDA: calls in this timed batch, set s at offsets + s * set_stride
    uint32_t outputs;               // CUDA, EMPTY: bit j set if buffer j is an output (the calibration kernel)
    uint64_t set_stride;  // bytes of one set, its last FENCE included (CUDA: between two sets); MAP: the region size
    uint32_t spin_us;     // CUDA, EMPTY: then keep the GPU busy this long (the calibration's longer calls)
    uint32_t mark;        // CUDA, CALL/EMPTY: the call's mark (GATE, DONE words); makes the size a multiple of 8
};

struct Reply {
    uint32_t magic, kind;
    uint64_t call;  // DONE echoes the call number of the Go it answers
    double call_ms;  // CUDA: the worker's own events around the call(s): believed only within the supervisor's bound
    double tail_ms;  // CUDA: from there until the whole device was idle
};

}  // namespace kjp
