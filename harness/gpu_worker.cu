// kerneljudge GPU worker: the untrusted half of a run on the CUDA track (the trusted half is
// grader/run/cuda_supervisor.cu; docs/security.md, "The boundary").
//
// It runs in the sandbox. It starts CUDA, maps the device memory the supervisor exported to it (a file
// descriptor received once with MAP: CUDA's virtual-memory API, which works across the sandbox's PID namespace
// where the legacy IPC handles do not), and answers EMPTY calls with a kernel that reads the inputs and writes
// the outputs (then, if asked, one that keeps the GPU busy for a given time) while the supervisor calibrates its
// clock: no submission code exists in this process yet. On LOAD it installs its seccomp filter (seccomp.h),
// loads the compiled submission and says LOADED; from then on it only answers: for each CALL it queues, on the
// stream it calls on, a wait for the GATE word to hold the call's mark, then calls `kerneljudge_entry` once per
// set on the buffers named between two CUDA events, writes the mark into the DONE word on that stream, says
// READY, waits for the whole device, and answers DONE with the events' times. It holds no seed, key, record or
// clock the grader believes: the supervisor makes the inputs, raises GATE, keeps the outputs, times the work
// between GATE and the DONE word with its own events (grader/boundary/protocol.h), and keeps this process frozen
// (SIGSTOP) between calls.
//
// Usage: worker CONTROL_FD LIBRARY
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cuda_driver.h"
#include "protocol.h"
#include "seccomp.h"

namespace {

using EntryFn = void (*)(void**, const int*);

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "kerneljudge harness: %s\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(3);
}

void check(cudaError_t error, const char* during) {
    if (error != cudaSuccess) fail(std::string("CUDA error during ") + during + ": " + cudaGetErrorString(error));
}

void check(CUresult result, const char* during) {
    if (result != CUDA_SUCCESS) fail(std::string("CUDA error during ") + during + ": " + kj::driver_error(result));
}

int g_control = -1;

void reply(uint32_t kind, uint64_t call, double call_ms = 0, double tail_ms = 0) {
    kjp::Reply r{kjp::MAGIC, kind, call, call_ms, tail_ms};
    if (send(g_control, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r) std::_Exit(0);  // the supervisor left
}

// The next message, and the file descriptor that came with it (-1 where none: only MAP brings one).
kjp::Go receive(int* fd) {
    kjp::Go go;
    char control[CMSG_SPACE(sizeof(int))];
    iovec data{&go, sizeof go};
    msghdr message{};
    message.msg_iov = &data, message.msg_iovlen = 1;
    message.msg_control = control, message.msg_controllen = sizeof control;
    ssize_t n = recvmsg(g_control, &message, MSG_CMSG_CLOEXEC);
    if (n <= 0) std::_Exit(0);  // the supervisor left
    if (n != (ssize_t)sizeof go || go.magic != kjp::MAGIC) fail("malformed message from the supervisor");
    if (message.msg_flags & MSG_CTRUNC) fail("a message with more than one file descriptor from the supervisor");
    *fd = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&message); c; c = CMSG_NXTHDR(&message, c))
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
            std::memcpy(fd, CMSG_DATA(c), std::min<size_t>(c->cmsg_len - CMSG_LEN(0), sizeof(int)));
    return go;
}

// The supervisor's device memory, mapped read-write into this process's address space.
char* map_region(int fd, size_t bytes) {
    CUmemGenericAllocationHandle handle;
    check(KJ_DRIVER(cuMemImportFromShareableHandle)(&handle, (void*)(uintptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
          "importing the shared buffers");
    close(fd);
    CUdeviceptr base = 0;
    check(KJ_DRIVER(cuMemAddressReserve)(&base, bytes, 0, 0, 0), "reserving addresses for the shared buffers");
    check(KJ_DRIVER(cuMemMap)(base, bytes, 0, handle, 0), "mapping the shared buffers");
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE, access.location.id = 0;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(KJ_DRIVER(cuMemSetAccess)(base, bytes, &access, 1), "mapping the shared buffers");
    check(KJ_DRIVER(cuMemRelease)(handle), "mapping the shared buffers");
    return reinterpret_cast<char*>(base);
}

// The calibration's longer calls: one thread keeps the GPU busy for `ns` nanoseconds by its global timer.
__global__ void spin_kernel(uint64_t ns) {
    uint64_t start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    while (now - start < ns);
}

// The calibration's stand-in for a submission: reads every input word and writes every output word of the
// buffers named, so the supervisor measures its interval's overhead around real memory traffic.
__global__ void touch_kernel(uint32_t* p, size_t words, bool write, uint32_t* sink) {
    uint32_t acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < words; i += (size_t)gridDim.x * blockDim.x) {
        if (write)
            p[i] = 0;
        else
            acc ^= p[i];
    }
    if (acc == 0x7eadbeef) *sink = acc;  // practically never: keeps the loads
}

cudaEvent_t g_start, g_returned, g_idle;
uint32_t* g_sink = nullptr;
CUdeviceptr g_done = 0;  // the DONE word, in the shared device memory: this process's stream writes the call's mark
CUdeviceptr g_gate = 0;  // the GATE word beside it: the supervisor's GPU raises it, this process's stream waits

// Every set's buffers lie inside the region, in order.
bool valid(const kjp::Go& go, size_t bytes) {
    if (go.sets == 0 || go.set_stride > bytes || go.sets > bytes / std::max<uint64_t>(go.set_stride, 1)) return false;
    for (uint32_t j = 0; j < go.buffers; ++j)
        if (go.offsets[j] >= go.set_stride || (j > 0 && go.offsets[j] < go.offsets[j - 1])) return false;
    return true;
}

// On the stream the submission is called on (the legacy default stream): a wait for the GATE word to hold the
// call's mark (the supervisor's GPU raises it once its stream has made the inputs and recorded its first event),
// an event, `work`, an event, and the mark written into the DONE word (the supervisor's stream waits for it to
// record its second event); READY once all of it is queued. Work queued behind the gate starts the moment GATE
// is raised, so the events hold the kernels' time and not the host's launch latency, as Nsight Compute's
// durations do. A solve that waits for its own work (a synchronising call) cannot return before GATE is raised:
// the supervisor goes on without READY after a few milliseconds (cuda_supervisor.cu, READY_WAIT_MS), and READY
// comes when it returns. Then the whole device is synchronised and a third event measures how long work
// outlived the call (side streams).
template <typename Work>
void timed_reply(const kjp::Go& go, Work work) {
    static auto wait_value = KJ_DRIVER(cuStreamWaitValue32);
    static auto write_value = KJ_DRIVER(cuStreamWriteValue32);
    check(wait_value(CU_STREAM_LEGACY, g_gate, go.mark, CU_STREAM_WAIT_VALUE_GEQ), "waiting for the GATE word");
    check(cudaEventRecord(g_start, 0), "the submission's solve");
    work();
    check(cudaEventRecord(g_returned, 0), "the submission's solve");
    check(write_value(CU_STREAM_LEGACY, g_done, go.mark, CU_STREAM_WRITE_VALUE_DEFAULT), "marking the call done");
    check(cudaGetLastError(), "the submission's solve");
    reply(kjp::READY, go.call);
    check(cudaDeviceSynchronize(), "the submission's solve");
    check(cudaEventRecord(g_idle, 0), "the submission's solve");
    check(cudaEventSynchronize(g_idle), "the submission's solve");
    float call_ms = 0, tail_ms = 0;
    check(cudaEventElapsedTime(&call_ms, g_start, g_returned), "the submission's solve");
    check(cudaEventElapsedTime(&tail_ms, g_returned, g_idle), "the submission's solve");
    reply(kjp::DONE, go.call, call_ms, tail_ms);
}

}  // namespace

// The streams a submission makes wait for the legacy default stream, so for the GATE word: work queued behind
// the gate must not run before its inputs exist, and a stream made non-blocking would not wait. The submission
// is loaded after this program, so its calls resolve here first (the program exports these, -rdynamic); a stream
// the submission gets otherwise starts before its inputs and is never right, which only harms the submission.
// An honest stream of its own it synchronises before returning works, a few milliseconds later per call (the
// supervisor goes on without READY while solve waits: cuda_supervisor.cu, READY_WAIT_MS). Host code only: the
// device pass has CUDA's own device-side definitions of these names.
#if !defined(__CUDA_ARCH__)
extern "C" cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned int flags) {
    using Create = cudaError_t (*)(cudaStream_t*, unsigned int);
    static const auto create = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "cudaStreamCreateWithFlags"));
    return create ? create(stream, flags & ~cudaStreamNonBlocking) : cudaErrorUnknown;
}

extern "C" cudaError_t cudaStreamCreateWithPriority(cudaStream_t* stream, unsigned int flags, int priority) {
    using Create = cudaError_t (*)(cudaStream_t*, unsigned int, int);
    static const auto create = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "cudaStreamCreateWithPriority"));
    return create ? create(stream, flags & ~cudaStreamNonBlocking, priority) : cudaErrorUnknown;
}
#endif

int main(int argc, char** argv) {
    if (argc != 3) fail("usage: worker CONTROL_FD LIBRARY");
    g_control = std::atoi(argv[1]);
    check(cudaSetDevice(0), "device start");
    check(cudaFree(nullptr), "device start");
    for (cudaEvent_t* e : {&g_start, &g_returned, &g_idle}) check(cudaEventCreate(e), "creating events");
    check(cudaMalloc(&g_sink, sizeof(uint32_t)), "device start");

    int fd = -1;
    kjp::Go go = receive(&fd);
    if (go.kind != kjp::MAP || fd < 0 || go.offsets[0] + sizeof(uint32_t) > go.set_stride ||
        go.offsets[1] + sizeof(uint32_t) > go.set_stride)
        fail("expected the shared buffers from the supervisor");
    const size_t bytes = go.set_stride;
    char* region = map_region(fd, bytes);
    g_done = reinterpret_cast<CUdeviceptr>(region + go.offsets[0]);
    g_gate = reinterpret_cast<CUdeviceptr>(region + go.offsets[1]);
    reply(kjp::MAPPED, 0);

    EntryFn entry = nullptr;
    void* pointers[kjp::MAX_BUFFERS];
    for (;;) {
        go = receive(&fd);
        if (fd >= 0) fail("an unexpected file descriptor from the supervisor");
        if (go.kind == kjp::EXIT) {
            std::fflush(nullptr);  // what solve printed reaches the verdict's output tail (stdout is a pipe)
            std::_Exit(0);         // skip the submission's static destructors
        } else if (go.kind == kjp::LOAD && !entry) {
            if (!kj::install_seccomp()) fail("cannot install the seccomp filter");
            void* handle = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
            if (!handle) fail(std::string("cannot load the submission: ") + dlerror());
            entry = reinterpret_cast<EntryFn>(dlsym(handle, "kerneljudge_entry"));
            if (!entry) fail("the submission has no kerneljudge_entry");
            reply(kjp::LOADED, 0);
        } else if (go.kind == kjp::EMPTY) {
            if (go.buffers > (uint32_t)kjp::MAX_BUFFERS || !valid(go, bytes)) fail("malformed call");
            timed_reply(go, [&] {
                for (uint32_t s = 0; s < go.sets; ++s)
                    for (uint32_t j = 0; j < go.buffers; ++j) {
                        const size_t end = j + 1 < go.buffers ? go.offsets[j + 1] : go.set_stride;
                        touch_kernel<<<1024, 256>>>((uint32_t*)(region + go.offsets[j] + s * go.set_stride),
                                                    (end - go.offsets[j]) / 4, (go.outputs >> j) & 1, g_sink);
                    }
                if (go.spin_us) spin_kernel<<<1, 1>>>(uint64_t(go.spin_us) * 1000);
            });
        } else if (go.kind == kjp::CALL && entry) {
            if (go.buffers > (uint32_t)kjp::MAX_BUFFERS || go.ints > (uint32_t)kjp::MAX_INTS || !valid(go, bytes))
                fail("malformed call");
            timed_reply(go, [&] {
                for (uint32_t s = 0; s < go.sets; ++s) {
                    for (uint32_t j = 0; j < go.buffers; ++j) pointers[j] = region + go.offsets[j] + s * go.set_stride;
                    entry(pointers, go.values);
                }
            });
        } else {
            fail("a message out of order from the supervisor");
        }
    }
}
