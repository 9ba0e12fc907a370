// kerneljudge supervisor: the trusted half of a run on the CPU track (docs/security.md, "The boundary").
//
// Longer than 300 lines because it is one program with one job, kept in one file so that the trusted code
// of a run can be read top to bottom: the request, the worker's control, one call, the two modes, main.
//
// The grader starts it as its own user, outside the sandbox, after it started the worker (harness/worker.cpp)
// in the sandbox. Both share a control socket (SOCK_SEQPACKET, grader/run/protocol.h) and a sealed memfd in
// which the call's buffers lie. The supervisor alone holds the secret keys; for every call it
//   1. makes the inputs (grader/run/generator.h) and poisons the outputs with NaN while the worker is frozen
//      (SIGSTOP, every thread seen stopped in /proc), flushes the caches (timed calls),
//   2. starts ITS clock, thaws the worker (SIGCONT), sends CALL, waits for DONE, freezes the worker again and
//      waits until every thread of it is stopped, and only then stops the clock: work a thread does after
//      DONE is timed, or not done at all,
//   3. copies what it must keep (outputs, and inputs to catch writes) into the trusted folder, which the
//      worker cannot see, and picks audits with getrandom() after the call.
// It writes every record the grader reads, in the formats the grader already reads (grader/judge/pipeline.py).
//
// Usage: supervisor CONTROL_FD MEMORY_FD PIDFD (PIDFD: the worker's, opened by the grader before it could be
// reaped, so a signal never reaches a process that took a dead worker's pid), the request on stdin (whitespace-separated tokens):
//   worker PID  outdir PATH  wall_ms MS
//   case NAME check K0 K1 DRAWS | case NAME bench K0 K1 MIN_SAMPLES MAX_SAMPLES BUDGET_MS AUDITS
//   ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
//   ... more cases ...   end
// (K0 K1: the case's 128-bit key as two hex words.) Exit status: 0 whatever the worker did (its fate is in
// the records); 70 a bad request or a failure of the supervisor itself; 74 the trusted folder could not be
// written (a full disk): both are the judge's errors, never a verdict.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "generator.h"
#include "protocol.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424  // the same number on every architecture (Linux 5.1)
#endif

namespace {

constexpr int EXIT_INTERNAL = 70, EXIT_DISK = 74;
constexpr size_t ALIGN = 4096;  // every buffer starts on its own page
constexpr double BUDGET_SLACK_MS = 10000;  // after the wall limit, the sandbox has killed the worker by now
constexpr int MAX_WARMUP = 50, EMPTY_CALLS = 21;
constexpr double TARGET_RSE = 0.005;

[[noreturn]] void die(int status, const std::string& what) {
    std::fprintf(stderr, "kerneljudge supervisor: %s\n", what.c_str());
    std::_Exit(status);
}

struct Buffer {
    bool is_input = false;
    kjg::Dtype dtype = kjg::Dtype::F32;
    size_t count = 0;
    uint32_t low_bits = 0, scale_bits = 0;
    size_t offset = 0;
};

size_t bytes(const Buffer& b) { return kjg::element_bytes(b.dtype); }

struct Case {
    std::string name, mode;
    uint64_t k0 = 0, k1 = 0;
    int draws = 0, min_samples = 0, max_samples = 0, audits = 0;
    double budget_ms = 0;
    std::vector<int> ints;
    std::vector<Buffer> buffers;
};

// --- the trusted folder: every write checked, a failure is the judge's (exit 74) ----------------------------

int g_outdir = -1;

void write_file(const std::string& name, const void* data, size_t bytes, bool append) {
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    int fd = openat(g_outdir, name.c_str(), flags, 0600);
    if (fd < 0) die(EXIT_DISK, "cannot create " + name + " in the trusted folder: " + std::strerror(errno));
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(EXIT_DISK, "cannot write " + name + " (is the judge's disk full?): " + std::strerror(errno));
        p += n, bytes -= (size_t)n;
    }
    if (close(fd) != 0) die(EXIT_DISK, "cannot write " + name + " (is the judge's disk full?): " + std::strerror(errno));
}

void append_line(const std::string& name, const std::string& line) {
    std::string text = line + "\n";
    write_file(name, text.data(), text.size(), true);
}

// --- clocks and randomness -------------------------------------------------------------------------------

double now_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);  // not slewed by NTP; nothing in the sandbox can set it
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

double unix_time() {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

uint64_t random64() {
    uint64_t value = 0;
    if (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value) die(EXIT_INTERNAL, "getrandom failed");
    return value;
}

// --- the request -----------------------------------------------------------------------------------------

struct Request {
    pid_t worker = 0;
    std::string outdir;
    double wall_ms = 0;
    std::vector<Case> cases;
};

Case read_case(std::istream& in) {
    Case c;
    in >> c.name >> c.mode >> std::hex >> c.k0 >> c.k1 >> std::dec;
    if (c.mode == "check")
        in >> c.draws;
    else if (c.mode == "bench")
        in >> c.min_samples >> c.max_samples >> c.budget_ms >> c.audits;
    else
        die(EXIT_INTERNAL, "unknown case mode " + c.mode);
    std::string word;
    size_t n = 0;
    in >> word >> n;
    if (word != "ints" || n > (size_t)kjp::MAX_INTS) die(EXIT_INTERNAL, "malformed ints in the request");
    c.ints.resize(n);
    for (auto& v : c.ints) in >> v;
    in >> word >> n;
    if (word != "buffers" || n > (size_t)kjp::MAX_BUFFERS) die(EXIT_INTERNAL, "malformed buffers in the request");
    c.buffers.resize(n);
    size_t offset = 0;
    for (auto& b : c.buffers) {
        std::string dtype;
        in >> word >> dtype >> b.count;
        b.is_input = word == "in";
        if (!kjg::parse_dtype(dtype, &b.dtype)) die(EXIT_INTERNAL, "unknown element type " + dtype + " in the request");
        if (b.is_input) in >> b.low_bits >> b.scale_bits;
        b.offset = offset;
        offset += (std::max<size_t>(b.count, 1) * bytes(b) + ALIGN - 1) / ALIGN * ALIGN;
    }
    if (!in) die(EXIT_INTERNAL, "malformed request");
    return c;
}

Request read_request() {
    Request r;
    std::string word;
    std::cin >> word >> r.worker;
    if (word != "worker" || r.worker <= 1) die(EXIT_INTERNAL, "expected worker PID");
    std::cin >> word >> r.outdir;
    if (word != "outdir") die(EXIT_INTERNAL, "expected outdir");
    std::cin >> word >> r.wall_ms;
    if (word != "wall_ms") die(EXIT_INTERNAL, "expected wall_ms");
    while (std::cin >> word && word != "end") {
        if (word != "case") die(EXIT_INTERNAL, "expected case, got " + word);
        r.cases.push_back(read_case(std::cin));
    }
    if (word != "end") die(EXIT_INTERNAL, "the request has no end");
    return r;
}

// --- the worker: frozen between calls ----------------------------------------------------------------------

pid_t g_worker = 0;
int g_worker_fd = -1;  // pidfd
int g_control = -1;

bool signal_worker(int sig) { return syscall(SYS_pidfd_send_signal, g_worker_fd, sig, nullptr, 0) == 0; }
double g_deadline_ms = 0;

// True when every thread of the worker is stopped (or dead): none of its code can run.
bool all_stopped() {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/task", (int)g_worker);
    DIR* tasks = opendir(path);
    if (!tasks) return true;  // gone
    bool stopped = true;
    while (dirent* e = readdir(tasks)) {
        if (e->d_name[0] == '.') continue;
        char stat_path[352], text[512];
        std::snprintf(stat_path, sizeof stat_path, "%s/%s/stat", path, e->d_name);
        int fd = open(stat_path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;  // the thread just ended
        ssize_t n = read(fd, text, sizeof text - 1);
        close(fd);
        if (n <= 0) continue;
        text[n] = 0;
        const char* paren = std::strrchr(text, ')');
        char state = paren && paren[1] == ' ' ? paren[2] : '?';
        if (state != 'T' && state != 't' && state != 'Z' && state != 'X') {
            stopped = false;
            break;
        }
    }
    closedir(tasks);
    return stopped;
}

enum class Fate { OK, GONE, VIOLATION };
std::string g_violation;

Fate freeze() {
    if (!signal_worker(SIGSTOP)) return Fate::GONE;
    const double until = now_ms() + 5000;
    while (!all_stopped()) {
        if (now_ms() > until) {
            g_violation = "a thread of the program could not be stopped after a call";
            return Fate::VIOLATION;
        }
        sched_yield();
    }
    return Fate::OK;
}

void thaw() { signal_worker(SIGCONT); }

void send_go(const kjp::Go& go) {
    if (send(g_control, &go, sizeof go, MSG_NOSIGNAL) != (ssize_t)sizeof go) return;  // gone: the reply says so
}

// One reply of `kind` (and call number `call`, for DONE), waiting until the run's deadline.
Fate receive(uint32_t kind, uint64_t call) {
    for (;;) {
        pollfd p{g_control, POLLIN, 0};
        int left = (int)std::max(0.0, g_deadline_ms - now_ms());
        int ready = poll(&p, 1, left);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return Fate::GONE;  // past the wall limit: the sandbox killed it, or is about to
        kjp::Reply reply;
        ssize_t n = recv(g_control, &reply, sizeof reply, MSG_TRUNC);
        if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return Fate::GONE;
        if (n < 0) continue;
        if (n != (ssize_t)sizeof reply || reply.magic != kjp::MAGIC || reply.kind != kind) {
            g_violation = "the program sent a message the worker never sends";
            return Fate::VIOLATION;
        }
        if (kind == kjp::DONE && reply.call != call) {
            g_violation = "the program sent a reply out of turn (not for the call in progress)";
            return Fate::VIOLATION;
        }
        return Fate::OK;
    }
}

// While the worker is frozen nothing may be waiting on the socket: a reply sent ahead of its call (to end
// the next timed call at once) is a violation.
Fate nothing_pending() {
    char byte;
    ssize_t n = recv(g_control, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n > 0) {
        g_violation = "the program sent a message out of turn (a reply before its call)";
        return Fate::VIOLATION;
    }
    return n == 0 ? Fate::GONE : Fate::OK;
}

// One call, timed by the supervisor's clock from before the thaw to after the freeze. `kind`: CALL or EMPTY.
Fate call(const Case* c, uint32_t kind, uint64_t index, double* ms) {
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kind, go.call = index;
    if (c) {
        go.buffers = (uint32_t)c->buffers.size(), go.ints = (uint32_t)c->ints.size();
        for (size_t j = 0; j < c->buffers.size(); ++j) go.offsets[j] = c->buffers[j].offset;
        for (size_t j = 0; j < c->ints.size(); ++j) go.values[j] = c->ints[j];
    }
    Fate fate = nothing_pending();
    if (fate != Fate::OK) return fate;
    const double start = now_ms();
    thaw();
    send_go(go);
    fate = receive(kjp::DONE, index);
    Fate frozen = freeze();
    *ms = now_ms() - start;
    return fate != Fate::OK ? fate : frozen;
}

// --- the shared buffers -----------------------------------------------------------------------------------

char* g_region = nullptr;
size_t g_region_bytes = 0;

void* buffer(const Buffer& b) { return g_region + b.offset; }

void prepare(const Case& c, uint64_t index) {
    const uint64_t seed = kjg::siphash24(c.k0, c.k1, index);
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        const Buffer& b = c.buffers[j];
        if (b.is_input)
            kjg::fill(b.dtype, buffer(b), b.count, kjg::tensor_seed(seed, j), b.low_bits, b.scale_bits);
        else
            kjg::poison(b.dtype, buffer(b), b.count);
    }
}

void keep(const Case& c, const std::string& stem, bool outputs_only) {
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        if (outputs_only && c.buffers[j].is_input) continue;
        write_file(stem + "." + std::to_string(j) + ".bin", buffer(c.buffers[j]), c.buffers[j].count * bytes(c.buffers[j]),
                   false);
    }
}

volatile unsigned g_flush_sink;  // keeps the flush's loads

// Reads a buffer twice the last-level cache (64 MiB at least, 1 GiB at most): no input or output of the
// call is cached when it starts. Reading, not writing, so no dirty lines are left for the call to evict.
void flush_cache() {
    static std::vector<unsigned char> lines;
    if (lines.empty()) {
        long llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
        lines.assign(std::clamp<long>(2 * llc, 64l << 20, 1l << 30), 1);
    }
    unsigned sum = 0;
    for (size_t i = 0; i < lines.size(); i += 64) sum += lines[i];
    g_flush_sink = sum;
}

// --- the two modes ------------------------------------------------------------------------------------------

std::string format_call(uint64_t index, double ms) {
    char line[96];
    std::snprintf(line, sizeof line, "%llu %.6f 0.000000", (unsigned long long)index, ms);
    return line;
}

// Correctness: DRAWS calls on fresh inputs; after each, every buffer is kept (outputs, and inputs as they
// came back).
Fate run_check(const Case& c) {
    for (int draw = 0; draw < c.draws; ++draw) {
        prepare(c, (uint64_t)draw);
        append_line("progress", "call " + c.name + " " + std::to_string(draw));
        double ms = 0;
        Fate fate = call(&c, kjp::CALL, (uint64_t)draw, &ms);
        if (fate != Fate::OK) return fate;
        append_line("progress", "returned " + c.name + " " + std::to_string(draw));
        keep(c, c.name + ".d" + std::to_string(draw), false);
        append_line(c.name + ".calls", format_call((uint64_t)draw, ms));
    }
    return Fate::OK;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double relative_error_of_median(std::vector<double> v) {
    if (v.size() < 4) return 1.0;
    std::sort(v.begin(), v.end());
    double iqr = v[3 * v.size() / 4] - v[v.size() / 4];
    double med = median_of(v);
    return med > 0 ? 1.2533 * (iqr / 1.349) / std::sqrt((double)v.size()) / med : 1.0;
}

// Timing (docs/timing.md): empty calls measure the handshake; warm-up until three calls agree within 2%;
// samples until the median is known to TARGET_RSE or the budget is spent; one more call, always audited.
// Every call gets fresh inputs, NaN outputs and a cold cache. Audits are picked after the call returns (1 in
// 3, up to AUDITS - 1; the last one is kept for the final call), and nothing about them reaches the worker.
Fate run_bench(const Case& c) {
    const double started = now_ms();
    auto spent_ms = [&] { return now_ms() - started; };
    std::vector<double> empty;
    for (int i = 0; i < EMPTY_CALLS; ++i) {
        double ms = 0;
        Fate fate = call(nullptr, kjp::EMPTY, 0, &ms);
        if (fate != Fate::OK) return fate;
        empty.push_back(ms);
    }
    uint64_t index = 0;
    int audits_left = std::max(1, c.audits);
    std::vector<uint64_t> audited;
    std::vector<std::string> lines;
    auto one_call = [&](bool final_call, double* ms) {
        prepare(c, index);
        flush_cache();
        Fate fate = call(&c, kjp::CALL, index, ms);
        if (fate != Fate::OK) return fate;
        if (final_call || (audits_left > 1 && random64() % 3 == 0)) {
            --audits_left;
            keep(c, c.name + ".a" + std::to_string(index), true);
            audited.push_back(index);
        }
        ++index;
        return Fate::OK;
    };
    std::vector<double> warm;
    int warmup = 0;
    while (warmup < MAX_WARMUP && spent_ms() < c.budget_ms / 4) {
        double ms = 0;
        Fate fate = one_call(false, &ms);
        if (fate != Fate::OK) return fate;
        warm.push_back(ms);
        ++warmup;
        if (warm.size() >= 3) {
            double hi = *std::max_element(warm.end() - 3, warm.end()), lo = *std::min_element(warm.end() - 3, warm.end());
            if (hi <= lo * 1.02) break;
        }
    }
    std::vector<double> samples;
    auto enough = [&] {
        int n = (int)samples.size();
        if (n >= c.max_samples) return true;
        if (n >= c.min_samples && relative_error_of_median(samples) < TARGET_RSE) return true;
        return n >= 3 && spent_ms() > c.budget_ms;
    };
    while (!enough()) {
        double ms = 0;
        const uint64_t this_call = index;
        Fate fate = one_call(false, &ms);
        if (fate != Fate::OK) return fate;
        samples.push_back(ms);
        lines.push_back(format_call(this_call, ms));
    }
    double final_ms = 0;
    Fate fate = one_call(true, &final_ms);  // indistinguishable from the others; not a sample
    if (fate != Fate::OK) return fate;
    char header[200];
    std::snprintf(header, sizeof header, "mode single batch 1 overhead_ms %.6f tail_overhead_ms 0.000000 warmup %d",
                  median_of(empty), warmup);
    std::string text = std::string(header) + "\n";
    for (const std::string& line : lines) text += line + "\n";
    write_file(c.name + ".times", text.data(), text.size(), false);
    std::string list;
    for (uint64_t a : audited) list += std::to_string(a) + "\n";
    write_file(c.name + ".audits", list.data(), list.size(), false);
    return Fate::OK;
}

}  // namespace

int main(int argc, char** argv) {
    prctl(PR_SET_DUMPABLE, 0);  // no ptrace, no /proc/<pid>/mem, for anyone but root
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (argc != 4) die(EXIT_INTERNAL, "usage: supervisor CONTROL_FD MEMORY_FD PIDFD < request");
    g_control = std::atoi(argv[1]);
    const int memory = std::atoi(argv[2]);
    g_worker_fd = std::atoi(argv[3]);
    Request request = read_request();
    g_worker = request.worker;
    g_deadline_ms = now_ms() + request.wall_ms + BUDGET_SLACK_MS;
    g_outdir = open(request.outdir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (g_outdir < 0) die(EXIT_INTERNAL, "cannot open the trusted folder " + request.outdir);

    struct stat info;
    if (fstat(memory, &info) != 0) die(EXIT_INTERNAL, "cannot stat the shared memory");
    g_region_bytes = (size_t)info.st_size;
    for (const Case& c : request.cases)
        for (const Buffer& b : c.buffers)
            if (b.offset + b.count * bytes(b) > g_region_bytes) die(EXIT_INTERNAL, "the shared memory is too small");
    if (g_region_bytes) {
        void* p = mmap(nullptr, g_region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
        if (p == MAP_FAILED) die(EXIT_INTERNAL, std::string("cannot map the shared memory: ") + std::strerror(errno));
        g_region = static_cast<char*>(p);
    }

    append_line("progress", "loading");
    Fate fate = receive(kjp::LOADED, 0);
    if (fate == Fate::OK) fate = freeze();
    if (fate == Fate::OK) append_line("progress", "loaded");
    for (size_t i = 0; fate == Fate::OK && i < request.cases.size(); ++i) {
        const Case& c = request.cases[i];
        char line[160];
        std::snprintf(line, sizeof line, "case %s %.6f", c.name.c_str(), unix_time());
        append_line("progress", line);
        fate = c.mode == "check" ? run_check(c) : run_bench(c);
    }
    if (fate == Fate::OK) {
        char line[64];
        std::snprintf(line, sizeof line, "done %.6f", unix_time());
        append_line("progress", line);
        kjp::Go go{};
        go.magic = kjp::MAGIC, go.kind = kjp::EXIT;
        thaw();
        send_go(go);
    } else if (fate == Fate::VIOLATION) {
        signal_worker(SIGKILL);
        append_line("violation", g_violation);
    }
    return 0;
}
