// kerneljudge worker: the untrusted half of a run on the CPU track (the trusted half is
// grader/run/supervisor.cpp; docs/security.md, "The boundary").
//
// It runs in the sandbox, maps the shared buffers, installs its seccomp filter (seccomp.h), loads the
// compiled submission, says LOADED, and then only answers: for each CALL it calls `kerneljudge_entry` on the
// buffers named and answers DONE; EMPTY is answered at once; EXIT ends it. Before the first call of each
// layout it makes the guards' FENCE pages (protocol.h) inaccessible in its own mapping, so a write that runs
// past a buffer's canary faults at once; the canary itself is the supervisor's to check, whatever this process
// does to its mapping. It never holds a seed, a key, a
// record or a clock the grader believes: the supervisor makes the inputs, keeps the outputs and times each
// call, and keeps this process frozen (SIGSTOP) between calls. Whatever the submission does to this program
// (patch it, lie on the socket, leave threads running) can change nothing but this process's own answers.
//
// Usage: worker CONTROL_FD MEMORY_FD LIBRARY
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "protocol.h"
#include "seccomp.h"

namespace {

using EntryFn = void (*)(void**, const int*);

[[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "kerneljudge harness: %s\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(3);
}

// The FENCE page before each buffer named and the set's last one made PROT_NONE in this process's mapping (the
// rest read-write), when the call's layout is not the one already fenced; nothing where pages are not FENCE-sized.
void fence(char* region, size_t bytes, const kjp::Go& go) {
    static kjp::Go fenced{};
    static bool any = false;
    const bool same = any && fenced.buffers == go.buffers && fenced.set_stride == go.set_stride &&
                      std::memcmp(fenced.offsets, go.offsets, sizeof go.offsets) == 0;
    if (same || !region || sysconf(_SC_PAGESIZE) != (long)kjp::GUARD_FENCE) return;
    if (mprotect(region, bytes, PROT_READ | PROT_WRITE) != 0) fail("cannot reset the guard pages");
    auto protect = [&](uint64_t at) {
        if (at + kjp::GUARD_FENCE <= bytes && mprotect(region + at, kjp::GUARD_FENCE, PROT_NONE) != 0)
            fail("cannot protect the guard pages");
    };
    for (uint32_t j = 0; j < go.buffers; ++j)
        if (go.offsets[j] >= kjp::GUARD_LEAD + kjp::GUARD_FENCE) protect(go.offsets[j] - kjp::GUARD_LEAD - kjp::GUARD_FENCE);
    if (go.set_stride >= kjp::GUARD_FENCE) protect(go.set_stride - kjp::GUARD_FENCE);
    fenced = go, any = true;
}

void reply(int control, uint32_t kind, uint64_t call) {
    kjp::Reply r{kjp::MAGIC, kind, call};
    if (send(control, &r, sizeof r, MSG_NOSIGNAL) != (ssize_t)sizeof r) std::_Exit(0);  // the supervisor left
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) fail("usage: worker CONTROL_FD MEMORY_FD LIBRARY");
    const int control = std::atoi(argv[1]), memory = std::atoi(argv[2]);
    struct stat info;
    if (fstat(memory, &info) != 0) fail("cannot stat the shared buffers");
    const size_t bytes = (size_t)info.st_size;
    char* region = nullptr;
    if (bytes) {
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
        if (p == MAP_FAILED) fail("cannot map the shared buffers");
        region = static_cast<char*>(p);
    }
    close(memory);
    if (!kj::install_seccomp()) fail("cannot install the seccomp filter");

    void* handle = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
    if (!handle) fail(std::string("cannot load the submission: ") + dlerror());
    auto entry = reinterpret_cast<EntryFn>(dlsym(handle, "kerneljudge_entry"));
    if (!entry) fail("the submission has no kerneljudge_entry");
    reply(control, kjp::LOADED, 0);

    void* pointers[kjp::MAX_BUFFERS];
    for (;;) {
        kjp::Go go;
        ssize_t n = recv(control, &go, sizeof go, 0);
        if (n <= 0) std::_Exit(0);  // the supervisor left
        if (n != (ssize_t)sizeof go || go.magic != kjp::MAGIC) fail("malformed message from the supervisor");
        if (go.kind == kjp::EXIT) {
            std::fflush(nullptr);  // what solve printed reaches the verdict's output tail (stdout is a pipe)
            std::_Exit(0);         // skip the submission's static destructors
        }
        if (go.kind == kjp::CALL) {
            if (go.buffers > (uint32_t)kjp::MAX_BUFFERS || go.ints > (uint32_t)kjp::MAX_INTS) fail("malformed call");
            for (uint32_t j = 0; j < go.buffers; ++j) {
                if (go.offsets[j] >= bytes) fail("a buffer outside the shared memory");
                pointers[j] = region + go.offsets[j];
            }
            fence(region, bytes, go);
            entry(pointers, go.values);
        }
        reply(control, kjp::DONE, go.call);
    }
}
