// kerneljudge CUDA supervisor: the trusted half of a run on the CUDA track (docs/security.md, "The boundary";
// docs/timing.md, "The CUDA track's clock").
//
// Longer than 300 lines because it is one program with one job, kept in one file so that the trusted code of
// a GPU run can be read top to bottom: device memory, one call, the calibration, the two modes, main. What it
// shares with the CPU track's supervisor (the request, the trusted folder, clocks, the worker's control) is
// supervision.h.
//
// The grader starts it as its own user, outside the sandbox, once the worker (harness/gpu_worker.cu) started
// in the sandbox. It owns every buffer of the run: one device allocation it exports to the worker as a file
// descriptor (CUDA's virtual-memory API), with the DONE and GATE words in its last page, a private one the worker
// never sees, into which it copies what a call left (the snapshot). The supervisor alone holds the secret keys.
// For every call it
//   1. thaws the worker, sends CALL and waits for READY (both workers have queued solve's work behind a wait for
//      the GATE word by then), or READY_WAIT_MS for it;
//   2. queues on its stream: the inputs, the outputs poisoned and the guards' canary (guards.h; generator.h in a
//      kernel), the L2 flushed (timed calls), its first event, a kernel that raises the GATE word to the call's
//      mark, a wait for the DONE word to hold the mark (which the worker's stream writes after solve), its second
//      event, and the copy of the call's outputs into the snapshot. Between the two events, on the GPU's clock,
//      lie the worker's work and an overhead (the GATE kernel, the switches between the two contexts, the
//      worker's events). A worker that marks DONE early gains nothing: the second event is stamped when this
//      stream runs, and the snapshot right after it holds whatever the work had not finished: poison left in a
//      timed call's float outputs ends the run, and the audits check the rest;
//   3. on DONE freezes the worker (every thread seen stopped) and waits for its stream; a DONE word that never
//      reaches the mark is released by the supervisor itself and ends the run as a violation;
//   4. writes the worker's own CUDA-event time of each call as the sample, and beside it the judge's time of
//      the call: the interval between its two events less the overhead, calibrated with the same steps around
//      a kernel of the worker's own that reads the inputs and writes the outputs, before any submission code
//      was loaded. The grader scores the judge's time, and believes the worker's claim only where the two agree
//      closely (grader/judge/benchmarks.py, docs/timing.md).
// With a JIT stage in the request (supervision.h run_jit_stage: the Python tracks, whose kernels compile on their
// first call), one untimed call per distinct size set runs between LOADED and the first case, on its own inputs.
// After the clock stops, a kernel checks every guard of the call's sets (a write past either end of a buffer ends
// the run with its record), and the audits are drawn with getrandom() (Audits, supervision.h): a sample taken is
// copied from the snapshot into one of the audit slots, device memory of the supervisor's own, and only the
// slots' last contents reach the trusted folder, where every record is written: whole, or for a row-audited
// problem only the rows drawn once the calls are over, with a scan of every element (row_audit.h).
//
// Usage: cuda_supervisor CONTROL_FD PIDFD, the request (supervision.h) on stdin.
#include <sys/stat.h>

#include "cuda_driver.h"
#include "input_check.h"
#include "row_audit.h"
#include "supervision.h"

namespace {

using namespace kjs;

constexpr double BATCH_BELOW_MS = 0.020;
// A call this long is an average over milliseconds already: the stop rule's sample floor is lowered to what adds up
// to SAMPLE_FLOOR_MS of calls, never below LONG_CALL_MIN_SAMPLES (docs/timing.md, "stop rule"). A 20 ms call takes
// 10 samples instead of 30; calls under 5 ms keep the request's floor.
constexpr double SAMPLE_FLOOR_MS = 150;
constexpr int LONG_CALL_MIN_SAMPLES = 10;
constexpr double BATCH_TARGET_MS = 0.5;
constexpr int MAX_BATCH = 256;
constexpr size_t MAX_BATCH_BYTES = size_t(1) << 30;
constexpr int CALIBRATION_CALLS = 25, CALIBRATION_DISCARDED = 5;  // the first calls still find caches and clocks cold
// The calibration's longer calls, the GPU kept busy this long after the stand-in kernel: the rest of a call grows
// with its length (on the H100, by up to ~170 us at 1.1 ms: a CPU left idle that long wakes more slowly), so it
// is measured at lengths that span the benchmarks' and interpolated by each call's length.
constexpr uint32_t LONG_CALLS_US[] = {250, 1000, 4000};
constexpr int LONG_CALLS = 8, LONG_CALLS_DISCARDED = 2;
constexpr double REST_SLOPE_CAP = 0.5;  // the rest may grow by at most this much per ms of work (see rest_for)
// The GPU's clocks up before the calibration, as they are during the calls: warmed at least this long and until
// the clock probe holds still, at most GPU_WARMUP_MS (see warm_gpu).
constexpr double GPU_WARMUP_MIN_MS = 20, GPU_WARMUP_MS = 200;
constexpr uint32_t CLOCK_PROBE_STEPS = 1u << 19;  // about 1 ms of dependent FMAs at an H100's or H200's top clock
// After the worker's DONE (it has waited for its whole device, so its mark is written), the supervisor's stream
// should pass the DONE word's wait at once; past this long, the supervisor writes the word itself.
constexpr double RELEASE_MS = 200;
// How an idle CPU stretches a call's rest: a supervisor asleep in poll() through a call wakes late, by an amount
// that varies from call to call (on the H100 host, a VM with no cpuidle driver: rests of 0.4-0.8 ms and a
// calibration spread up to 2.7 ms; waiting without sleeping brought them to 0.35-0.42 ms and 3-45 us, see
// docs/timing.md). So the supervisor waits for DONE without sleeping for up to CALL_SPIN_MS, and for the run asks
// the kernel (PM QoS, /dev/cpu_dma_latency) to keep every core within CPU_WAKE_LATENCY_US of waking, which covers
// the worker's threads too on hosts with deep idle states; where the grader's user may not (the device is root's
// by default), the header says so and the calibration measures what the idle states cost.
constexpr double CALL_SPIN_MS = 50;
// A worker that queues a call's work behind the GATE word says READY once solve has returned; one whose solve
// waits for that work (a synchronisation inside solve) cannot, and the call goes on without its READY after this.
constexpr double READY_WAIT_MS = 5;
constexpr size_t GATE_AFTER_DONE = 64;  // bytes from the DONE word to the GATE word, in the same page
constexpr int32_t CPU_WAKE_LATENCY_US = 10;
constexpr size_t KEEP_CHUNK_BYTES = size_t(8) << 20;  // keep_file's two pinned chunks

void check(cudaError_t error, const char* during) {
    if (error != cudaSuccess) die(EXIT_INTERNAL, std::string("CUDA error during ") + during + ": " + cudaGetErrorString(error));
}

void check(CUresult result, const char* during) {
    if (result != CUDA_SUCCESS) die(EXIT_INTERNAL, std::string("CUDA error during ") + during + ": " + kj::driver_error(result));
}

// --- device memory -------------------------------------------------------------------------------------------

char* g_region = nullptr;    // shared with the worker
char* g_snapshot = nullptr;  // the supervisor's alone: what each call left, at the same offsets
char* g_audit_slots = nullptr;  // the supervisor's alone: one set's room per audit of a benchmark (Audits)
unsigned* g_guard_flags = nullptr;  // per set of a call: 1 if a guard changed
unsigned* g_unwritten = nullptr;    // the poisoned elements the last timed call's snapshot still held
size_t g_region_bytes = 0;
int g_region_fd = -1;
cudaStream_t g_stream;
cudaStream_t g_release_stream;  // only for writing the DONE word when the worker never did
size_t g_done_offset = 0;       // the DONE word, in the region's last page
CUdeviceptr g_done = 0;
CUdeviceptr g_gate = 0;          // the GATE word, beside it: the worker's stream waits for it to hold the call's mark
uint32_t g_mark = 0;  // the last call's mark

// How many sets of a case's buffers the region holds at once (a timed batch uses one set per call).
int sets_of(const Case& c) {
    if (c.mode != "bench") return 1;
    return (int)std::clamp<size_t>(MAX_BATCH_BYTES / std::max<size_t>(c.set_bytes, 1), 1, MAX_BATCH);
}

void allocate(const std::vector<Case>& cases) {
    size_t bytes = kjp::PAGE, audit_bytes = 0;
    for (const Case& c : cases) {
        bytes = std::max(bytes, c.set_bytes * sets_of(c));
        if (c.mode == "bench") audit_bytes = std::max(audit_bytes, c.set_bytes * Audits(c.audits).size());
    }
    g_done_offset = (bytes + kjp::PAGE - 1) / kjp::PAGE * kjp::PAGE;
    bytes = g_done_offset + kjp::PAGE;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE, prop.location.id = 0;
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    size_t granularity = 0;
    check(KJ_DRIVER(cuMemGetAllocationGranularity)(&granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
          "sizing the shared buffers");
    g_region_bytes = (bytes + granularity - 1) / granularity * granularity;
    CUmemGenericAllocationHandle handle;
    check(KJ_DRIVER(cuMemCreate)(&handle, g_region_bytes, &prop, 0), "allocating the shared buffers");
    CUdeviceptr base = 0;
    check(KJ_DRIVER(cuMemAddressReserve)(&base, g_region_bytes, 0, 0, 0), "allocating the shared buffers");
    check(KJ_DRIVER(cuMemMap)(base, g_region_bytes, 0, handle, 0), "allocating the shared buffers");
    CUmemAccessDesc access{};
    access.location = prop.location, access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    check(KJ_DRIVER(cuMemSetAccess)(base, g_region_bytes, &access, 1), "allocating the shared buffers");
    check(KJ_DRIVER(cuMemExportToShareableHandle)(&g_region_fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
          "exporting the shared buffers");
    g_region = reinterpret_cast<char*>(base);
    check(cudaMalloc(&g_snapshot, g_region_bytes), "allocating the snapshot");
    if (audit_bytes) check(cudaMalloc(&g_audit_slots, audit_bytes), "allocating the audits' slots");
    check(cudaMalloc(&g_guard_flags, MAX_BATCH * sizeof(unsigned)), "allocating the guards' flags");
    check(cudaMalloc(&g_unwritten, sizeof(unsigned)), "allocating the outputs' check");
    g_done = base + g_done_offset;
    g_gate = g_done + GATE_AFTER_DONE;
    // Marks start at 1 and only grow, and a worker's stream waits for GATE to reach one: a fresh allocation need
    // not be zero, and a GATE word that started high would let queued work run before its inputs exist.
    check(cudaMemset(reinterpret_cast<void*>(g_done), 0, kjp::PAGE), "allocating the shared buffers");
}

// MAP, with the region's file descriptor, and the worker's MAPPED.
Fate share_region() {
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kjp::MAP, go.set_stride = g_region_bytes;
    go.offsets[0] = g_done_offset, go.offsets[1] = g_done_offset + GATE_AFTER_DONE;
    const int fds[1] = {g_region_fd};
    char control[CMSG_SPACE(sizeof fds)] = {};
    iovec data{&go, sizeof go};
    msghdr message{};
    message.msg_iov = &data, message.msg_iovlen = 1;
    message.msg_control = control, message.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&message);
    c->cmsg_level = SOL_SOCKET, c->cmsg_type = SCM_RIGHTS, c->cmsg_len = CMSG_LEN(sizeof fds);
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    if (sendmsg(g_control, &message, MSG_NOSIGNAL) != (ssize_t)sizeof go) return Fate::GONE;
    close(g_region_fd);
    return receive(kjp::MAPPED, 0);
}

__global__ void fill_kernel(char* base, size_t n, kjg::Dtype dtype, uint64_t seed, uint32_t low, uint32_t scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        kjg::write_element(dtype, base, i, seed, low, scale);
}

__global__ void poison_kernel(char* base, size_t n, kjg::Dtype dtype) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        kjg::write_poison(dtype, base, i);
}

char* at(const Case& c, int set, size_t j, char* base = g_region) { return base + set * c.set_bytes + c.buffers[j].offset; }

// The guards of one set (guards.h) as a kernel argument: ranges [begin, end) from the set's start.
struct DeviceGuards {
    uint32_t count = 0;
    uint64_t begin[2 * kjp::MAX_BUFFERS], end[2 * kjp::MAX_BUFFERS];
};

DeviceGuards device_guards(const Case& c) {
    DeviceGuards g;
    for (const kjguard::Range& r : c.guards) g.begin[g.count] = r.begin, g.end[g.count] = r.end, ++g.count;
    return g;
}

constexpr int GUARD_BLOCKS = 16;  // per guard and set; a guard is at most ~24 KiB

// Block (x, guard, set): the canary into guard `blockIdx.y` of set `blockIdx.z`, 16 bits a thread per step.
__global__ void guard_fill_kernel(char* region, uint64_t set_bytes, DeviceGuards g, uint64_t salt) {
    const uint64_t set = blockIdx.z * set_bytes;
    for (uint64_t p = g.begin[blockIdx.y] + 2 * (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x); p < g.end[blockIdx.y];
         p += 2 * (uint64_t)gridDim.x * blockDim.x)
        *reinterpret_cast<uint16_t*>(region + set + p) = kjguard::canary(salt, set + p);
}

// The same walk, flagging each set in which any guard no longer holds the canary.
__global__ void guard_check_kernel(const char* region, uint64_t set_bytes, DeviceGuards g, uint64_t salt, unsigned* flags) {
    const uint64_t set = blockIdx.z * set_bytes;
    bool changed = false;
    for (uint64_t p = g.begin[blockIdx.y] + 2 * (blockIdx.x * (uint64_t)blockDim.x + threadIdx.x); p < g.end[blockIdx.y];
         p += 2 * (uint64_t)gridDim.x * blockDim.x)
        changed |= *reinterpret_cast<const uint16_t*>(region + set + p) != kjguard::canary(salt, set + p);
    if (changed) flags[blockIdx.z] = 1;
}

// Inputs of calls index .. index+sets-1 (one per set), NaN in every output; queued on the supervisor's stream.
void prepare(const Case& c, uint64_t index, int sets) {
    for (int s = 0; s < sets; ++s) {
        for (size_t j = 0; j < c.buffers.size(); ++j) {
            const Buffer& b = c.buffers[j];
            if (b.is_input)
                fill_kernel<<<1024, 256, 0, g_stream>>>(at(c, s, j), b.count, b.dtype, input_seed(c, index + s, j),
                                                        b.low_bits, b.scale_bits);
            else
                poison_kernel<<<1024, 256, 0, g_stream>>>(at(c, s, j), b.count, b.dtype);
        }
    }
    if (!c.guards.empty())
        guard_fill_kernel<<<dim3(GUARD_BLOCKS, (unsigned)c.guards.size(), sets), 256, 0, g_stream>>>(
            g_region, c.set_bytes, device_guards(c), g_canary_salt);
    check(cudaGetLastError(), "making the inputs");
}

// After the call(s) numbered index .. index+sets-1, its worker frozen: the first set whose guards changed, its
// record (the host scan of a copy of that set says where) and the run's end; else OK.
Fate check_guards(const Case& c, uint64_t index, int sets) {
    if (c.guards.empty()) return Fate::OK;
    check(cudaMemsetAsync(g_guard_flags, 0, sets * sizeof(unsigned), g_stream), "checking the guards");
    guard_check_kernel<<<dim3(GUARD_BLOCKS, (unsigned)c.guards.size(), sets), 256, 0, g_stream>>>(
        g_region, c.set_bytes, device_guards(c), g_canary_salt, g_guard_flags);
    std::vector<unsigned> flags(sets);
    check(cudaMemcpyAsync(flags.data(), g_guard_flags, sets * sizeof(unsigned), cudaMemcpyDeviceToHost, g_stream),
          "checking the guards");
    check(cudaStreamSynchronize(g_stream), "checking the guards");
    for (int s = 0; s < sets; ++s) {
        if (!flags[s]) continue;
        std::vector<unsigned char> set(c.set_bytes);
        check(cudaMemcpy(set.data(), g_region + s * c.set_bytes, c.set_bytes, cudaMemcpyDeviceToHost), "checking the guards");
        const Fate fate = judge_guards(c, index + s, kjguard::scan(set.data(), s * c.set_bytes, c.guards, g_canary_salt));
        if (fate != Fate::OK) return fate;
    }
    return Fate::OK;
}

// Queues the copy of what the call(s) left (the outputs, or every buffer) into the snapshot.
void snapshot(const Case& c, int sets, bool outputs_only) {
    for (int s = 0; s < sets; ++s)
        for (size_t j = 0; j < c.buffers.size(); ++j)
            if (!outputs_only || !c.buffers[j].is_input)
                check(cudaMemcpyAsync(at(c, s, j, g_snapshot), at(c, s, j), c.buffers[j].count * bytes(c.buffers[j]),
                                      cudaMemcpyDeviceToDevice, g_stream),
                      "keeping the outputs");
}

// Counts the elements of a float output that still hold the poison (never written) into *count.
__global__ void unwritten_kernel(const char* base, size_t n, kjg::Dtype dtype, unsigned* count) {
    unsigned found = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        found += kjg::element_state(dtype, base, i) == 1;
    if (found) atomicAdd(count, found);
}

// Queues the count of the elements of a timed call's snapshot that no one wrote: float outputs only, whose
// poison (a NaN) no right answer holds (an int32 poison is a value arithmetic can make).
void count_unwritten(const Case& c, int sets) {
    check(cudaMemsetAsync(g_unwritten, 0, sizeof(unsigned), g_stream), "checking the outputs were written");
    for (int s = 0; s < sets; ++s)
        for (size_t j = 0; j < c.buffers.size(); ++j) {
            const Buffer& b = c.buffers[j];
            if (b.is_input || !(b.dtype == kjg::Dtype::F32 || b.dtype == kjg::Dtype::F16 || b.dtype == kjg::Dtype::BF16))
                continue;
            unwritten_kernel<<<1024, 256, 0, g_stream>>>(at(c, s, j, g_snapshot), b.count, b.dtype, g_unwritten);
        }
    check(cudaGetLastError(), "checking the outputs were written");
}

// `bytes` of device memory (queued on g_stream) into the trusted file `name`, through two pinned chunks: each
// chunk's copy overlaps the last one's write. A test's outputs reach a gigabyte; through a pageable buffer
// they cost its page faults and the driver's extra copy, on the GPU's turn, for every kept call.
void keep_file(const std::string& name, const char* device, size_t bytes) {
    static char* chunk[2] = {nullptr, nullptr};
    static cudaEvent_t copied[2];
    if (!chunk[0])
        for (int k = 0; k < 2; ++k) {
            check(cudaMallocHost(&chunk[k], KEEP_CHUNK_BYTES), "keeping the outputs");
            check(cudaEventCreateWithFlags(&copied[k], cudaEventDisableTiming), "keeping the outputs");
        }
    const size_t chunks = (bytes + KEEP_CHUNK_BYTES - 1) / KEEP_CHUNK_BYTES;
    auto part = [&](size_t k) { return std::min(KEEP_CHUNK_BYTES, bytes - k * KEEP_CHUNK_BYTES); };
    auto copy = [&](size_t k) {
        check(cudaMemcpyAsync(chunk[k % 2], device + k * KEEP_CHUNK_BYTES, part(k), cudaMemcpyDeviceToHost, g_stream),
              "keeping the outputs");
        check(cudaEventRecord(copied[k % 2], g_stream), "keeping the outputs");
    };
    const int fd = open_file(name, false);
    if (chunks > 0) copy(0);
    for (size_t k = 0; k < chunks; ++k) {
        if (k + 1 < chunks) copy(k + 1);  // into the chunk whose write ended in the last round
        check(cudaEventSynchronize(copied[k % 2]), "keeping the outputs");
        write_all(fd, name, chunk[k % 2], part(k));
    }
    close_file(fd, name);
}

// The outputs of set `set` of the snapshot (or of the audits' slots) into the trusted folder, one file per
// buffer: STEM.INDEX.bin.
void keep(const Case& c, int set, const std::string& stem, char* from = g_snapshot) {
    for (size_t j = 0; j < c.buffers.size(); ++j)
        if (!c.buffers[j].is_input)
            keep_file(stem + "." + std::to_string(j) + ".bin", at(c, set, j, from), c.buffers[j].count * bytes(c.buffers[j]));
}

// `count` counters of type T on the device, at T's initial values: `queue(found)` queues on the supervisor's
// stream the kernels that fill them (and may wait for them); the counters once those kernels are done.
template <class T, class Queue>
std::vector<T> device_counts(size_t count, Queue queue, const char* during) {
    std::vector<T> counts(count);
    T* found = nullptr;
    check(cudaMalloc(&found, count * sizeof(T)), during);
    check(cudaMemcpyAsync(found, counts.data(), count * sizeof(T), cudaMemcpyHostToDevice, g_stream), during);
    queue(found);
    check(cudaGetLastError(), during);
    check(cudaMemcpyAsync(counts.data(), found, count * sizeof(T), cudaMemcpyDeviceToHost, g_stream), during);
    check(cudaStreamSynchronize(g_stream), during);
    check(cudaFree(found), during);
    return counts;
}

size_t inputs_of(const Case& c) {
    return (size_t)std::count_if(c.buffers.begin(), c.buffers.end(), [](const Buffer& b) { return b.is_input; });
}

// Counts the elements of an input that no longer hold their generated bits, with the first of them
// (input_check.h).
__global__ void changed_kernel(const char* base, size_t n, kjg::Dtype dtype, uint64_t seed, uint32_t low, uint32_t scale,
                               Changes* found) {
    unsigned long long count = 0, first = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        if (kjg::stored_bits(dtype, base, i) != kjg::element_bits(dtype, i, seed, low, scale) && count++ == 0) first = i;
    if (count) atomicAdd(&found->count, count), atomicMin(&found->first, first);
}

// A test's call (set 0 of the snapshot) into the trusted folder: its outputs, and what changed in its inputs.
void keep_test(const Case& c, uint64_t call, const std::string& stem) {
    auto check_inputs = [&](Changes* found) {
        for (size_t j = 0, next = 0; j < c.buffers.size(); ++j) {
            const Buffer& b = c.buffers[j];
            if (b.is_input)
                changed_kernel<<<1024, 256, 0, g_stream>>>(at(c, 0, j, g_snapshot), b.count, b.dtype,
                                                           input_seed(c, call, j), b.low_bits, b.scale_bits, found + next++);
        }
    };
    const std::vector<Changes> changes = device_counts<Changes>(inputs_of(c), check_inputs, "checking the inputs");
    keep(c, 0, stem);
    write_input_changes(c, stem, changes);
}

// Counts, in one output of an audited call, the elements never written and the NaN and Inf the program wrote,
// with the first index of each (row_audit.h).
__global__ void scan_kernel(const char* base, size_t n, kjg::Dtype dtype, Unfinished* found) {
    unsigned long long unwritten = 0, first_unwritten = ~0ull, bad = 0, first_bad = ~0ull;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const int state = kjg::element_state(dtype, base, i);
        if (state == 1 && unwritten++ == 0) first_unwritten = i;
        if (state == 2 && bad++ == 0) first_bad = i;
    }
    if (unwritten) atomicAdd(&found->unwritten, unwritten), atomicMin(&found->first_unwritten, first_unwritten);
    if (bad) atomicAdd(&found->bad, bad), atomicMin(&found->first_bad, first_bad);
}

// The rows of one output ([outer, rows, inner], rows of row_bytes) drawn under `seed` into `to`, as [outer,
// drawn, inner] (generator.h drawn_row).
__global__ void gather_kernel(const char* from, char* to, uint64_t outer, uint64_t rows, uint64_t row_bytes,
                              uint64_t drawn, uint64_t seed) {
    const uint64_t total = outer * drawn * row_bytes;
    for (uint64_t i = blockIdx.x * (uint64_t)blockDim.x + threadIdx.x; i < total; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t row = i / row_bytes, k = row % drawn, o = row / drawn;
        to[i] = from[(o * rows + kjg::drawn_row(k, rows, drawn, seed)) * row_bytes + i % row_bytes];
    }
}

// An audited call's outputs (slot `slot` of the audits' slots) into the trusted folder once the benchmark's calls
// are over: whole, or for a row-audited case the rows drawn now, with the scan of every element (row_audit.h).
// The snapshot, no longer needed by then, holds each output's gathered rows on their way out.
void keep_audit(const Case& c, int slot, const std::string& stem) {
    if (!c.rows_drawn) return keep(c, slot, stem, g_audit_slots);
    const uint64_t seed = random64();
    auto scan_and_keep_rows = [&](Unfinished* found) {
        std::vector<char> host;
        for (size_t j = 0, next = 0; j < c.buffers.size(); ++j) {
            const Buffer& b = c.buffers[j];
            if (b.is_input) continue;
            const char* output = at(c, slot, j, g_audit_slots);
            scan_kernel<<<1024, 256, 0, g_stream>>>(output, b.count, b.dtype, found + next++);
            const uint64_t row_bytes = b.inner * bytes(b);
            host.resize(b.outer * c.rows_drawn * row_bytes);
            gather_kernel<<<1024, 256, 0, g_stream>>>(output, g_snapshot, b.outer, c.rows, row_bytes, c.rows_drawn, seed);
            check(cudaGetLastError(), "keeping the audited rows");
            check(cudaMemcpyAsync(host.data(), g_snapshot, host.size(), cudaMemcpyDeviceToHost, g_stream),
                  "keeping the audited rows");
            check(cudaStreamSynchronize(g_stream), "keeping the audited rows");  // the snapshot is the next one's
            write_file(stem + "." + std::to_string(j) + ".bin", host.data(), host.size(), false);
        }
    };
    const size_t outputs = c.buffers.size() - inputs_of(c);
    write_scan(c, stem, seed, device_counts<Unfinished>(outputs, scan_and_keep_rows, "scanning the audited outputs"));
}

// Reads a buffer twice the L2's size so no input or output is cached when a timed call starts (reading, not
// writing: no dirty lines for the call to write back), and drops persisting-L2 lines.
__global__ void read_flush_kernel(const int4* buffer, size_t n, int* sink) {
    int acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        int4 v = buffer[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x7eadbeef) *sink = acc;  // practically never: keeps the loads
}

void flush_cache() {
    static int4* buffer = nullptr;
    static int* sink = nullptr;
    static size_t count = 0;
    if (!buffer) {
        int l2 = 0;
        check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0), "flushing L2");
        count = std::max<size_t>(2 * (size_t)l2, 8u << 20) / sizeof(int4);
        check(cudaMalloc(&buffer, count * sizeof(int4)), "flushing L2");
        check(cudaMalloc(&sink, sizeof(int)), "flushing L2");
        check(cudaMemset(buffer, 1, count * sizeof(int4)), "flushing L2");
    }
    read_flush_kernel<<<1024, 256, 0, g_stream>>>(buffer, count, sink);
    check(cudaGetLastError(), "flushing L2");
    check(cudaCtxResetPersistingL2Cache(), "resetting persisting L2");
}

// --- one call --------------------------------------------------------------------------------------------------

struct Call {
    double gpu_ms = 0;      // the judge's clock: the supervisor's events from GATE to the DONE word (work + overhead)
    double own_gpu_ms = 0;  // the supervisor's own GPU work around it (inputs, flush, snapshot), by its events
    double wall_ms = 0;     // the supervisor's host clock over the whole call, for the record
    kjp::Reply reply{};     // the worker's claim (call_ms, tail_ms over the whole batch; the tail less this
                            // process's GPU work after the DONE word)
};

// The supervisor's events of a call, after the worker's READY: inputs | GATE .. DONE word (the judge's clock) |
// snapshot | poison count.
enum Mark { INPUTS, GATE, DONE_WORD, SNAPSHOT_TAKEN, COUNTED, MARKS };
cudaEvent_t g_marks[MARKS];
int g_wake_latency_held = 0;  // 1 while this process holds the PM QoS request (see CPU_WAKE_LATENCY_US)

// Asks that no core sleep deeper than CPU_WAKE_LATENCY_US can wake from, for as long as this process lives (the
// kernel drops the request when the descriptor closes, at exit). Where the device may not be opened, nothing.
void hold_cpu_wake_latency() {
    const int fd = open("/dev/cpu_dma_latency", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return;
    g_wake_latency_held = write(fd, &CPU_WAKE_LATENCY_US, sizeof CPU_WAKE_LATENCY_US) == sizeof CPU_WAKE_LATENCY_US;
    if (!g_wake_latency_held) close(fd);
}

double elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
    float ms = 0;
    check(cudaEventElapsedTime(&ms, from, to), "reading the supervisor's events");
    return ms;
}

// Raises the GATE word: the work the worker queued behind its wait for it runs from now on.
__global__ void raise_gate_kernel(volatile uint32_t* gate, uint32_t mark) {
    *gate = mark;
    __threadfence_system();
}

// Whether a reply is waiting on the socket within `wait_ms` (polled without sleeping).
bool reply_within(double wait_ms) {
    const double until = now_ms() + wait_ms;
    do {
        pollfd p{g_control, POLLIN, 0};
        if (poll(&p, 1, 0) > 0) return true;
    } while (now_ms() < until);
    return false;
}

// Once the worker answered (or left): waits for the stream to pass the DONE word, writing the word itself where
// the worker never did (at once if `patient` is false, else after RELEASE_MS); whether it had to.
bool settle(uint32_t mark, bool patient) {
    const double release_at = now_ms() + (patient ? RELEASE_MS : 0);
    for (;;) {
        const cudaError_t state = cudaEventQuery(g_marks[DONE_WORD]);
        if (state == cudaSuccess) return false;
        if (state != cudaErrorNotReady) check(state, "waiting for the DONE word");
        if (now_ms() >= release_at) break;
    }
    static auto write_value = KJ_DRIVER(cuStreamWriteValue32);
    check(write_value(g_release_stream, g_done, mark, CU_STREAM_WRITE_VALUE_DEFAULT), "releasing the DONE word");
    return true;
}

// One call of `kind` (CALL or EMPTY) on `sets` sets of the case's buffers, inputs of calls index.. .
Fate call(const Case& c, uint32_t kind, uint64_t index, int sets, bool timed, Call* out, uint32_t spin_us = 0) {
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kind, go.call = index, go.spin_us = spin_us;
    go.mark = ++g_mark;
    go.buffers = (uint32_t)c.buffers.size(), go.ints = (uint32_t)c.ints.size();
    go.sets = (uint32_t)sets, go.set_stride = c.set_bytes;
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        go.offsets[j] = c.buffers[j].offset;
        go.outputs |= c.buffers[j].is_input ? 0u : 1u << j;
    }
    for (size_t j = 0; j < c.ints.size(); ++j) go.values[j] = c.ints[j];
    Fate fate = nothing_pending();
    if (fate != Fate::OK) return fate;
    // READY first, then the inputs: nothing the worker starts before its READY can have read them, and between
    // the inputs' last kernel and the first event this stream runs on without a gap (only the flush).
    const double start = now_ms();
    thaw();
    send_go(go);
    // A READY that does not come within READY_WAIT_MS is from a solve waiting for its own work, queued behind the
    // GATE word: the call goes on without it (its interval then holds solve's host time), and READY comes later.
    const bool late = !reply_within(READY_WAIT_MS);
    if (!late) fate = receive(kjp::READY, index, nullptr, CALL_SPIN_MS);
    const bool waiting = fate == Fate::OK;
    if (waiting) {
        static auto wait_value = KJ_DRIVER(cuStreamWaitValue32);
        check(cudaEventRecord(g_marks[INPUTS], g_stream), "making the inputs");
        prepare(c, index, sets);
        check(cudaMemsetAsync(reinterpret_cast<void*>(g_done), 0, sizeof(uint32_t), g_stream), "making the inputs");
        if (timed) flush_cache();
        check(cudaEventRecord(g_marks[GATE], g_stream), "starting the judge's clock");
        raise_gate_kernel<<<1, 1, 0, g_stream>>>(reinterpret_cast<uint32_t*>(g_gate), go.mark);
        check(wait_value(g_stream, g_done, go.mark, CU_STREAM_WAIT_VALUE_EQ), "waiting for the DONE word");
        check(cudaEventRecord(g_marks[DONE_WORD], g_stream), "stopping the judge's clock");
        snapshot(c, sets, timed);
        check(cudaEventRecord(g_marks[SNAPSHOT_TAKEN], g_stream), "keeping the outputs");
        if (timed) count_unwritten(c, sets);
        check(cudaEventRecord(g_marks[COUNTED], g_stream), "checking the outputs");
        if (late) fate = receive(kjp::READY, index, nullptr, CALL_SPIN_MS);
        if (fate == Fate::OK) fate = receive(kjp::DONE, index, &out->reply, CALL_SPIN_MS);
    }
    Fate frozen = freeze();
    if (waiting && settle(go.mark, fate == Fate::OK) && fate == Fate::OK) {
        g_violation = "the program's call returned without its stream marking the work done, so the judge's clock "
                      "could not stop";
        fate = Fate::VIOLATION;
    }
    check(cudaStreamSynchronize(g_stream), "keeping the outputs");
    out->wall_ms = now_ms() - start;
    if (!waiting) return fate;
    unsigned unwritten = 0;
    if (timed) check(cudaMemcpy(&unwritten, g_unwritten, sizeof unwritten, cudaMemcpyDeviceToHost), "checking the outputs");
    if (unwritten && fate == Fate::OK && kind == kjp::CALL) {
        g_violation = "timed call " + std::to_string(index) + " of " + c.name + " left " + std::to_string(unwritten) +
                      " output elements unwritten when its stream marked the work done: a call is timed until its "
                      "outputs are written";
        fate = Fate::VIOLATION;
    }
    out->gpu_ms = elapsed_ms(g_marks[GATE], g_marks[DONE_WORD]);
    out->own_gpu_ms =
        elapsed_ms(g_marks[INPUTS], g_marks[GATE]) + elapsed_ms(g_marks[DONE_WORD], g_marks[SNAPSHOT_TAKEN]);
    // The worker's tail ends with an event its context can stamp only once this one's work after the DONE word
    // (snapshot, poison count) has had the GPU, since the two contexts take turns: that work is not the program's.
    out->reply.tail_ms -= elapsed_ms(g_marks[DONE_WORD], g_marks[COUNTED]);
    return fate != Fate::OK ? fate : frozen;
}

// --- the calibration: the same steps around an empty kernel, before the submission is loaded -----------------

// The judge's interval of a call (GATE .. DONE word, on the GPU) = the worker's work + the rest (the GATE
// kernel, the switches between the two contexts, the worker's events, the DONE word's write and wait). The
// calibration measures the rest, at several lengths of the worker's work, and the supervisor's own GPU work per
// set, while the worker is still free of submission code.
struct RestAt {
    double work_ms, rest_ms;  // medians over calls of one length: the worker's event time, and the rest
    double spread_ms;         // the interquartile range of the rest at this length
};

struct Calibration {
    std::vector<RestAt> rests;  // by the worker's work, shortest first (the stand-in kernel alone, then longer)
    double spread_ms = 0;       // the largest interquartile range of the rest at one length
    double own_gpu_ms = 0;      // median of the supervisor's GPU work for one set
    double empty_call_ms = 0;   // the worker's events around an empty launch
    double stand_in_tail_ms = 0;  // median tail of the stand-in's shortest calls: an honest call's, switches and all
};

// The rest of a call whose worker worked `work_ms`: interpolated between the calibrated lengths, flat beyond
// them. The calibration makes it non-decreasing and never steeper than REST_SLOPE_CAP, so a call made longer
// (a program that idles to look slow to the clock) never lowers its own time.
double rest_for(const Calibration& cal, double work_ms) {
    const std::vector<RestAt>& r = cal.rests;
    if (work_ms <= r.front().work_ms) return r.front().rest_ms;
    for (size_t i = 1; i < r.size(); ++i)
        if (work_ms <= r[i].work_ms) {
            const double t = (work_ms - r[i - 1].work_ms) / (r[i].work_ms - r[i - 1].work_ms);
            return r[i - 1].rest_ms + t * (r[i].rest_ms - r[i - 1].rest_ms);
        }
    return r.back().rest_ms;
}

// The judge's time of a call's work: its interval less the rest for a call of its length, the length read off
// the same interval (less the shortest calls' rest), never off the worker's claim.
double judge_ms(const Call& one, const Calibration& cal) {
    return one.gpu_ms - rest_for(cal, one.gpu_ms - cal.rests.front().rest_ms);
}

double percentile(std::vector<double> v, double q) {
    std::sort(v.begin(), v.end());
    return v[(size_t)std::lround(q * (v.size() - 1))];
}

// The worker's events around nothing: the launch-and-record overhead reported with each benchmark. Nothing is
// timed by the judge's clock here, so GATE is raised by a memory operation of this process's own.
Fate empty_call(kjp::Reply* reply) {
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kjp::EMPTY, go.sets = 1, go.set_stride = kjp::PAGE, go.mark = ++g_mark;
    thaw();
    send_go(go);
    Fate fate = receive(kjp::READY, 0, nullptr, CALL_SPIN_MS);
    if (fate == Fate::OK) {
        static auto write_value = KJ_DRIVER(cuStreamWriteValue32);
        check(write_value(g_release_stream, g_gate, go.mark, CU_STREAM_WRITE_VALUE_DEFAULT), "raising the GATE word");
        fate = receive(kjp::DONE, 0, reply, CALL_SPIN_MS);
    }
    Fate frozen = freeze();
    return fate != Fate::OK ? fate : frozen;
}

// One warp's chain of dependent FMAs: its length follows the SM clock alone.
__global__ void clock_probe_kernel(uint32_t steps, float* sink) {
    float x = (float)threadIdx.x;
    for (uint32_t i = 0; i < steps; ++i) x = fmaf(x, 0.999999f, 0.5f);
    if (x == -1.0f) *sink = x;  // never: keeps the chain
}

// Keeps the GPU busy until its clocks are up when the calibration starts: rounds of the clock probe and a cache
// flush, until three probes in a row agree within 1% after GPU_WARMUP_MIN_MS, or GPU_WARMUP_MS. A GPU that was
// busy a moment ago (the last grading of a batch, or its check) passes in GPU_WARMUP_MIN_MS; an idle one ramps
// its clocks meanwhile, which the probe's shortening shows.
void warm_gpu() {
    const double started = now_ms();
    std::vector<double> probes;
    while (now_ms() - started < GPU_WARMUP_MS) {
        check(cudaEventRecord(g_marks[GATE], g_stream), "warming the GPU");
        clock_probe_kernel<<<1, 32, 0, g_stream>>>(CLOCK_PROBE_STEPS, nullptr);
        check(cudaGetLastError(), "warming the GPU");
        check(cudaEventRecord(g_marks[DONE_WORD], g_stream), "warming the GPU");
        flush_cache();
        check(cudaStreamSynchronize(g_stream), "warming the GPU");
        probes.push_back(elapsed_ms(g_marks[GATE], g_marks[DONE_WORD]));
        if (probes.size() < 3 || now_ms() - started < GPU_WARMUP_MIN_MS) continue;
        const auto [low, high] = std::minmax_element(probes.end() - 3, probes.end());
        if (*high <= *low * 1.01) break;
    }
}

// `count` calls of the stand-in, each then keeping the GPU busy `spin_us`, back to back; the first `discarded`
// are not kept. Adds the point (median work, median rest) to cal->rests and widens cal->spread_ms to its IQR; the
// shortest calls (spin_us 0) also give cal->stand_in_tail_ms.
Fate measure_rest(const Case& c, uint64_t first, int count, int discarded, uint32_t spin_us, Calibration* cal,
                  std::vector<double>* own) {
    std::vector<double> rests, works, tails;
    for (int i = 0; i < count; ++i) {
        Call one;
        Fate fate = call(c, kjp::EMPTY, first + i, 1, true, &one, spin_us);
        if (fate != Fate::OK) return fate;
        if (i < discarded) continue;
        rests.push_back(one.gpu_ms - one.reply.call_ms);
        works.push_back(one.reply.call_ms);
        tails.push_back(one.reply.tail_ms);
        own->push_back(one.own_gpu_ms);
    }
    if (spin_us == 0) cal->stand_in_tail_ms = median_of(tails);
    const double spread = percentile(rests, 0.75) - percentile(rests, 0.25);
    cal->rests.push_back({median_of(works), median_of(rests), spread});
    cal->spread_ms = std::max(cal->spread_ms, spread);
    return Fate::OK;
}

// Orders the calibrated lengths and makes the rest non-decreasing and no steeper than REST_SLOPE_CAP (a length
// whose calls happened to go quicker than a shorter one's takes the shorter one's rest).
void shape_rests(std::vector<RestAt>* rests) {
    std::sort(rests->begin(), rests->end(), [](const RestAt& a, const RestAt& b) { return a.work_ms < b.work_ms; });
    for (size_t i = 1; i < rests->size(); ++i) {
        RestAt& r = (*rests)[i];
        const RestAt& before = (*rests)[i - 1];
        r.work_ms = std::max(r.work_ms, before.work_ms + 1e-3);
        r.rest_ms = std::clamp(r.rest_ms, before.rest_ms, before.rest_ms + REST_SLOPE_CAP * (r.work_ms - before.work_ms));
    }
}

// The worker, still free of submission code, runs a kernel that reads every input and writes every output of
// one set (then, for the longer calls, keeps the GPU busy): its event time is true, so the interval's overhead is
// what the supervisor's clock saw beyond it.
Fate calibrate(const Case& c, Calibration* cal) {
    std::vector<double> own, calls;
    // inputs no call of the case will ever get
    const uint64_t unused = ~uint64_t(0) - CALIBRATION_CALLS - LONG_CALLS * std::size(LONG_CALLS_US);
    for (int i = 0; i < EMPTY_CALLS; ++i) {
        kjp::Reply empty{};
        Fate fate = empty_call(&empty);
        if (fate != Fate::OK) return fate;
        calls.push_back(empty.call_ms);
    }
    // Back to back, as the timed calls will run: whatever ran on the GPU just before (here, the previous
    // call's snapshot) changes what the next call's interval holds (a switch between the two contexts).
    Fate fate = measure_rest(c, unused, CALIBRATION_CALLS, CALIBRATION_DISCARDED, 0, cal, &own);
    uint64_t next = unused + CALIBRATION_CALLS;
    for (uint32_t spin_us : LONG_CALLS_US) {
        if (fate != Fate::OK) return fate;
        fate = measure_rest(c, next, LONG_CALLS, LONG_CALLS_DISCARDED, spin_us, cal, &own);
        next += LONG_CALLS;
    }
    if (fate != Fate::OK) return fate;
    shape_rests(&cal->rests);
    cal->own_gpu_ms = median_of(own);
    cal->empty_call_ms = median_of(calls);
    return Fate::OK;
}

// --- the two modes ---------------------------------------------------------------------------------------------

std::string format_times(uint64_t index, double call_ms, double tail_ms) {
    char line[96];
    std::snprintf(line, sizeof line, "%llu %.6f %.6f", (unsigned long long)index, call_ms, tail_ms);
    return line;
}

// Correctness: DRAWS calls on fresh inputs; after each, its outputs are kept and its inputs checked (keep_test),
// with the worker's times (the side-stream check reads the tail).
Fate run_check(const Case& c) {
    for (int draw = 0; draw < c.draws; ++draw) {
        append_line("progress", "call " + c.name + " " + std::to_string(draw));
        Call one;
        Fate fate = call(c, kjp::CALL, (uint64_t)draw, 1, false, &one);
        if (fate == Fate::OK) fate = check_guards(c, (uint64_t)draw, 1);
        if (fate != Fate::OK) return fate;
        append_line("progress", "returned " + c.name + " " + std::to_string(draw));
        keep_test(c, (uint64_t)draw, c.name + ".d" + std::to_string(draw));
        append_line(c.name + ".calls", format_times((uint64_t)draw, one.reply.call_ms, one.reply.tail_ms));
    }
    return Fate::OK;
}

// Timing (docs/timing.md): warm-up until three calls agree within 2%; calls under BATCH_BELOW_MS are timed in
// batches of fresh sets; samples until the median is known to TARGET_RSE or the budget is spent, then a random
// tail (one_more_sample). Every decision here is taken on the judge's time of each call; the worker's claim is
// only recorded beside it (NAME.times; the judge's times in NAME.clock), for the grader to compare. Every set of
// every sample is offered to the audits' draw (Audits): a set taken is copied from the snapshot into its slot.
Fate run_bench(const Case& c, const Calibration& cal) {
    const double started = now_ms();
    auto spent_ms = [&] { return now_ms() - started; };
    uint64_t index = 0;
    int batch = 1;
    Audits audits(c.audits);
    std::vector<std::string> lines;
    std::string clock = "call judge_ms claimed_ms gpu_interval_ms own_gpu_ms wall_ms\n";  // per call, all per set
    auto one_call = [&](bool sample, double* judged, double* claimed, double* tail) {
        Call one;
        Fate fate = call(c, kjp::CALL, index, batch, true, &one);
        if (fate == Fate::OK) fate = check_guards(c, index, batch);
        if (fate != Fate::OK) return fate;
        *judged = std::max(0.0, judge_ms(one, cal) / batch);
        *claimed = one.reply.call_ms / batch;
        if (!std::isfinite(*claimed) || *claimed < 0) *claimed = 0;  // a record the grader refuses
        *tail = std::isfinite(one.reply.tail_ms) ? std::max(0.0, one.reply.tail_ms) : 0;
        char line[200];
        std::snprintf(line, sizeof line, "%llu %.6f %.6f %.6f %.6f %.6f", (unsigned long long)index, *judged, *claimed,
                      one.gpu_ms / batch, one.own_gpu_ms / batch, one.wall_ms / batch);
        clock += std::string(line) + "\n";
        bool copied = false;
        for (int s = 0; sample && s < batch; ++s) {
            const int slot = audits.offer(index + s).slot;
            for (size_t j = 0; slot >= 0 && j < c.buffers.size(); ++j)
                if (!c.buffers[j].is_input) {
                    check(cudaMemcpyAsync(at(c, slot, j, g_audit_slots), at(c, s, j, g_snapshot),
                                          c.buffers[j].count * bytes(c.buffers[j]), cudaMemcpyDeviceToDevice, g_stream),
                          "keeping an audited call");
                    copied = true;
                }
        }
        if (copied) check(cudaStreamSynchronize(g_stream), "keeping an audited call");
        index += batch;
        return Fate::OK;
    };
    std::vector<double> warm;
    int warmup = 0;
    double ms = 0, claimed = 0, tail = 0;
    while (warmup < MAX_WARMUP && spent_ms() < c.budget_ms / 4) {
        Fate fate = one_call(false, &ms, &claimed, &tail);
        if (fate != Fate::OK) return fate;
        warm.push_back(ms);
        ++warmup;
        if (warm.size() >= 3) {
            double hi = *std::max_element(warm.end() - 3, warm.end()), lo = *std::min_element(warm.end() - 3, warm.end());
            if (hi <= lo * 1.02) break;
        }
    }
    clock.resize(clock.find('\n') + 1);  // warm-up calls are not samples
    const double per_call = median_of(std::vector<double>(warm.end() - std::min<size_t>(3, warm.size()), warm.end()));
    if (per_call < BATCH_BELOW_MS)
        batch = std::clamp((int)std::ceil(BATCH_TARGET_MS / std::max(per_call, 1e-4)), 2, sets_of(c));
    const int min_samples = std::clamp((int)std::ceil(SAMPLE_FLOOR_MS / std::max(per_call, 1e-4)),
                                       std::min(LONG_CALL_MIN_SAMPLES, c.min_samples), c.min_samples);
    std::vector<double> samples;
    auto enough = [&] {
        int n = (int)samples.size();
        if (n >= c.max_samples) return true;
        if (n >= min_samples && relative_error_of_median(samples) < TARGET_RSE) return true;
        return n >= 3 && spent_ms() > c.budget_ms;
    };
    int extra = 0;
    while (!enough() || one_more_sample(&extra)) {
        const uint64_t this_call = index;
        Fate fate = one_call(true, &ms, &claimed, &tail);
        if (fate != Fate::OK) return fate;
        samples.push_back(ms);
        lines.push_back(format_times(this_call, claimed, tail));
    }
    for (size_t slot = 0; slot < audits.kept().size(); ++slot)
        keep_audit(c, (int)slot, c.name + ".a" + std::to_string(audits.kept()[slot]));
    std::string rests;  // work_ms:rest_ms:spread_ms of each calibrated length, for whoever reads the record
    for (const RestAt& r : cal.rests) {
        char point[64];
        std::snprintf(point, sizeof point, "%s%.4f:%.4f:%.4f", rests.empty() ? "" : ",", r.work_ms, r.rest_ms,
                      r.spread_ms);
        rests += point;
    }
    char header[560];
    std::snprintf(header, sizeof header,
                  "mode %s batch %d overhead_ms %.6f tail_overhead_ms %.6f warmup %d clock_rest_ms %.6f "
                  "clock_spread_ms %.6f own_gpu_ms %.6f clock_rests_ms %s cpu_wake_latency_held %d",
                  batch == 1 ? "single" : "batch", batch, cal.empty_call_ms, cal.stand_in_tail_ms, warmup,
                  cal.rests.front().rest_ms, cal.spread_ms, cal.own_gpu_ms, rests.c_str(), g_wake_latency_held);
    write_bench_records(c.name, header, lines, audits.kept());
    write_file(c.name + ".clock", clock.data(), clock.size(), false);
    return Fate::OK;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 3) die(EXIT_INTERNAL, "usage: cuda_supervisor CONTROL_FD PIDFD < request");
    Request request = start(std::atoi(argv[1]), std::atoi(argv[2]));
    hold_cpu_wake_latency();
    check(cudaSetDevice(0), "device start");
    check(cudaFree(nullptr), "device start");
    check(cudaStreamCreateWithFlags(&g_stream, cudaStreamNonBlocking), "device start");
    check(cudaStreamCreateWithFlags(&g_release_stream, cudaStreamNonBlocking), "device start");
    for (cudaEvent_t& mark : g_marks) check(cudaEventCreate(&mark), "device start");
    allocate(request.cases);

    append_line("progress", "loading");
    Fate fate = share_region();
    std::vector<Calibration> calibrations(request.cases.size());
    if (fate == Fate::OK) {
        await_go(request);
        warm_gpu();
    }
    for (size_t i = 0; fate == Fate::OK && i < request.cases.size(); ++i)
        if (request.cases[i].mode == "bench") fate = calibrate(request.cases[i], &calibrations[i]);
    if (fate == Fate::OK) {
        kjp::Go load{};
        load.magic = kjp::MAGIC, load.kind = kjp::LOAD;
        thaw();
        send_go(load);
        fate = receive(kjp::LOADED, 0);
    }
    if (fate == Fate::OK) fate = freeze();
    auto run = [&](size_t i) {
        const Case& c = request.cases[i];
        return c.mode == "check" ? run_check(c) : run_bench(c, calibrations[i]);
    };
    auto jit = [&](const Case& c) {  // the JIT stage's call: as a test's first draw, on the stage's own inputs
        Call one;
        return call(c, kjp::CALL, 0, 1, false, &one);
    };
    fate = run_cases(request, fate, run, jit);
    return finish(fate);
}
