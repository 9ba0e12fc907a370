// The messages between the trusted supervisor (grader/run/supervisor.cpp) and the untrusted worker
// (harness/worker.cpp). They travel over a SOCK_SEQPACKET socketpair the grader makes: one message per
// packet, each of a fixed size, so a reader takes exactly one struct and anything else is a protocol
// violation. The buffers themselves never travel: they live in one shared memory region (a sealed memfd),
// and a Go message names each buffer by its offset in that region.
#pragma once
#include <cstdint>

namespace kjp {

constexpr uint32_t MAGIC = 0x4b4a5031;  // "KJP1"
constexpr int MAX_BUFFERS = 16;
constexpr int MAX_INTS = 16;

enum Kind : uint32_t {
    LOADED = 1,  // worker -> supervisor: the submission is loaded and kerneljudge_entry was found
    CALL = 2,    // supervisor -> worker: call kerneljudge_entry once on the buffers named
    EMPTY = 3,   // supervisor -> worker: answer DONE at once (measures the handshake)
    DONE = 4,    // worker -> supervisor: the call returned
    EXIT = 5,    // supervisor -> worker: leave now, status 0
};

struct Go {
    uint32_t magic, kind;
    uint64_t call;
    uint32_t buffers, ints;
    uint64_t offsets[MAX_BUFFERS];  // bytes from the start of the shared region
    int32_t values[MAX_INTS];       // the size arguments, in signature order
};

struct Reply {
    uint32_t magic, kind;
    uint64_t call;  // DONE echoes the call number of the Go it answers
};

}  // namespace kjp
