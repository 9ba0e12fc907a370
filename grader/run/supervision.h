// What the two trusted supervisors share (grader/run/supervisor.cpp for the CPU track, cuda_supervisor.cu for
// the CUDA track; docs/security.md, "The boundary"): the request, the trusted folder, the clocks, and the
// control of the untrusted worker, which is frozen (SIGSTOP, every thread seen stopped in /proc) between calls
// and thawed only for the call in progress.
//
// Longer than 300 lines because it is the trusted core of every run, kept in one header so it can be read top
// to bottom: the request, the trusted folder, clocks and randomness, the worker's control, statistics, the
// guards' verdict and the audits' draw (the guards' layout and canary are guards.h).
//
// Request (whitespace-separated tokens; grader/run/request.py writes it, grader/run/supervised.py adds the head):
//   worker PID  outdir PATH  wall_ms MS
//   [jit BUDGET_MS]   (the JIT stage: tracks whose kernels compile on their first call; run_jit_stage)
//   [go FD]   (a pipe the grader writes to, or closes, once the supervisor may calibrate: await_go)
//   [done FD]   (a pipe the supervisor closes once its records are final, "done" written: finish)
//   case NAME check K0 K1 DRAWS | case NAME bench K0 K1 MIN_SAMPLES MAX_SAMPLES BUDGET_MS AUDITS
//   ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
//   (bench only) rows ROWS DRAWN   then, where DRAWN is not 0, for each output: OUTER INNER
//   ... more cases ...   end
// (K0 K1: the case's 128-bit key as two hex words.) Exit status of a supervisor: 0 whatever the worker did (its
// fate is in the records); 70 a bad request or a failure of the supervisor itself; 74 the trusted folder could
// not be written (a full disk): both are the judge's errors, never a verdict.
#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
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
#include "guards.h"
#include "protocol.h"

#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424  // the same number on every architecture (Linux 5.1)
#endif

namespace kjs {

constexpr int EXIT_INTERNAL = 70, EXIT_DISK = 74;
constexpr double BUDGET_SLACK_MS = 10000;  // after the wall limit, the sandbox has killed the worker by now
constexpr int MAX_WARMUP = 50, EMPTY_CALLS = 21;
constexpr double TARGET_RSE = 0.005;

[[noreturn]] inline void die(int status, const std::string& what) {
    std::fprintf(stderr, "kerneljudge supervisor: %s\n", what.c_str());
    std::_Exit(status);
}

struct Buffer {
    bool is_input = false;
    kjg::Dtype dtype = kjg::Dtype::F32;
    size_t count = 0;
    uint32_t low_bits = 0, scale_bits = 0;
    size_t offset = 0;
    uint64_t outer = 0, inner = 0;  // an output of a row-audited case: its elements as [outer, Case::rows, inner]
};

inline size_t bytes(const Buffer& b) { return kjg::element_bytes(b.dtype); }

struct Case {
    std::string name, mode;
    uint64_t k0 = 0, k1 = 0;
    int draws = 0, min_samples = 0, max_samples = 0, audits = 0;
    double budget_ms = 0;
    std::vector<int> ints;
    std::vector<Buffer> buffers;
    std::vector<kjguard::Range> guards;  // around every buffer of one set (guards.h)
    size_t set_bytes = 0;                // one set of the case's buffers with their guards
    uint64_t rows = 0, rows_drawn = 0;   // a benchmark's rows and how many an audit checks (row_audit.h); 0: whole
};

// The seed of input j of call `call` of a case: both supervisors make the input from it, and check it after a
// test's call (input_check.h).
inline uint64_t input_seed(const Case& c, uint64_t call, size_t j) {
    return kjg::tensor_seed(kjg::siphash24(c.k0, c.k1, call), j);
}

// --- the trusted folder: every write checked, a failure is the judge's (exit 74) ----------------------------

inline int g_outdir = -1;

// A file of the trusted folder, written in parts: open_file, write_all (any number of times), close_file.
inline int open_file(const std::string& name, bool append) {
    int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | (append ? O_APPEND : O_TRUNC);
    int fd = openat(g_outdir, name.c_str(), flags, 0600);
    if (fd < 0) die(EXIT_DISK, "cannot create " + name + " in the trusted folder: " + std::strerror(errno));
    return fd;
}

inline void write_all(int fd, const std::string& name, const void* data, size_t bytes) {
    const char* p = static_cast<const char*>(data);
    while (bytes > 0) {
        ssize_t n = write(fd, p, bytes);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) die(EXIT_DISK, "cannot write " + name + " (is the judge's disk full?): " + std::strerror(errno));
        p += n, bytes -= (size_t)n;
    }
}

inline void close_file(int fd, const std::string& name) {
    if (close(fd) != 0) die(EXIT_DISK, "cannot write " + name + " (is the judge's disk full?): " + std::strerror(errno));
}

inline void write_file(const std::string& name, const void* data, size_t bytes, bool append) {
    const int fd = open_file(name, append);
    write_all(fd, name, data, bytes);
    close_file(fd, name);
}

inline void append_line(const std::string& name, const std::string& line) {
    std::string text = line + "\n";
    write_file(name, text.data(), text.size(), true);
}

// --- clocks and randomness -------------------------------------------------------------------------------

inline double now_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);  // not slewed by NTP; nothing in the sandbox can set it
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

inline double unix_time() {
    timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

inline uint64_t random64() {
    uint64_t value = 0;
    if (getrandom(&value, sizeof value, 0) != (ssize_t)sizeof value) die(EXIT_INTERNAL, "getrandom failed");
    return value;
}

// --- the request -----------------------------------------------------------------------------------------

struct Request {
    pid_t worker = 0;
    std::string outdir;
    double wall_ms = 0;
    double jit_ms = 0;  // the JIT stage's budget; 0: no stage
    int go_fd = -1;  // "go FD": calibrate only once FD is readable (await_go)
    int done_fd = -1;  // "done FD": closed once the records are final (finish)
    std::vector<Case> cases;
};

// A benchmark's "rows ROWS DRAWN" and, where DRAWN is not 0, "OUTER INNER" for each output in order: every
// output is [OUTER, ROWS, INNER] and an audit checks DRAWN of the rows (row_audit.h).
inline void read_rows(std::istream& in, Case* c) {
    std::string word;
    in >> word >> c->rows >> c->rows_drawn;
    if (word != "rows" || c->rows_drawn > c->rows || c->rows >> 32) die(EXIT_INTERNAL, "malformed rows in the request");
    for (Buffer& b : c->buffers)
        if (c->rows_drawn && !b.is_input) {
            in >> b.outer >> b.inner;
            if (!in || b.outer * c->rows * b.inner != b.count) die(EXIT_INTERNAL, "malformed rows in the request");
        }
}

inline Case read_case(std::istream& in) {
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
    std::vector<uint64_t> data_bytes;
    std::vector<uint32_t> widths;
    for (auto& b : c.buffers) {
        std::string dtype;
        in >> word >> dtype >> b.count;
        b.is_input = word == "in";
        if (!kjg::parse_dtype(dtype, &b.dtype)) die(EXIT_INTERNAL, "unknown element type " + dtype + " in the request");
        if (b.is_input) in >> b.low_bits >> b.scale_bits;
        data_bytes.push_back(b.count * bytes(b));
        widths.push_back((uint32_t)bytes(b));
    }
    if (c.mode == "bench") read_rows(in, &c);
    if (!in) die(EXIT_INTERNAL, "malformed request");
    const kjguard::Layout layout = kjguard::lay_out(data_bytes, widths);
    for (size_t j = 0; j < c.buffers.size(); ++j) c.buffers[j].offset = layout.offsets[j];
    c.guards = layout.guards;
    c.set_bytes = layout.set_bytes;
    return c;
}

inline Request read_request() {
    Request r;
    std::string word;
    std::cin >> word >> r.worker;
    if (word != "worker" || r.worker <= 1) die(EXIT_INTERNAL, "expected worker PID");
    std::cin >> word >> r.outdir;
    if (word != "outdir") die(EXIT_INTERNAL, "expected outdir");
    std::cin >> word >> r.wall_ms;
    if (word != "wall_ms") die(EXIT_INTERNAL, "expected wall_ms");
    while (std::cin >> word && word != "end") {
        if (word == "jit" && r.cases.empty() && r.jit_ms == 0) {
            if (!(std::cin >> r.jit_ms) || !(r.jit_ms > 0)) die(EXIT_INTERNAL, "malformed jit in the request");
            continue;
        }
        if (word == "go") {
            if (!(std::cin >> r.go_fd) || r.go_fd < 3) die(EXIT_INTERNAL, "malformed go in the request");
            continue;
        }
        if (word == "done") {
            if (!(std::cin >> r.done_fd) || r.done_fd < 3) die(EXIT_INTERNAL, "malformed done in the request");
            continue;
        }
        if (word != "case") die(EXIT_INTERNAL, "expected case, got " + word);
        r.cases.push_back(read_case(std::cin));
    }
    if (word != "end") die(EXIT_INTERNAL, "the request has no end");
    return r;
}

// --- the worker: frozen between calls ----------------------------------------------------------------------

inline pid_t g_worker = 0;
inline int g_worker_fd = -1;  // pidfd
inline int g_control = -1;
inline int g_done_fd = -1;  // the request's "done FD", closed by finish once "done" is written

inline bool signal_worker(int sig) { return syscall(SYS_pidfd_send_signal, g_worker_fd, sig, nullptr, 0) == 0; }
inline double g_deadline_ms = 0;

// True when every thread of the worker is stopped (or dead): none of its code can run.
inline bool all_stopped() {
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

// OVERRUN: the call wrote into a guard (guards.h); its record is written, the run ends: the verdict is known.
enum class Fate { OK, GONE, VIOLATION, OVERRUN };
inline std::string g_violation;

// Polls without yielding for the first millisecond: on a loaded machine (grade-many's compiles) a
// sched_yield() hands the core to another task for its whole slice, milliseconds inside the timed interval.
inline Fate freeze() {
    if (!signal_worker(SIGSTOP)) return Fate::GONE;
    const double started = now_ms(), until = started + 5000;
    while (!all_stopped()) {
        const double now = now_ms();
        if (now > until) {
            g_violation = "a thread of the program could not be stopped after a call";
            return Fate::VIOLATION;
        }
        if (now - started > 1.0) {
            timespec pause{0, 50000};
            nanosleep(&pause, nullptr);
        }
    }
    return Fate::OK;
}

inline void thaw() { signal_worker(SIGCONT); }

inline void send_go(const kjp::Go& go) {
    if (send(g_control, &go, sizeof go, MSG_NOSIGNAL) != (ssize_t)sizeof go) return;  // gone: the reply says so
}

// One reply of `kind` (and call number `call`, for DONE), waiting until the run's deadline; `got` keeps it.
// For the first `spin_ms` it polls without sleeping: a thread asleep in poll() wakes as slowly as its idle core
// (hundreds of microseconds, unevenly, on the H100 host), and inside a timed interval that is noise the bound
// must absorb.
inline Fate receive(uint32_t kind, uint64_t call, kjp::Reply* got = nullptr, double spin_ms = 0) {
    const double spin_until = now_ms() + spin_ms;
    for (;;) {
        pollfd p{g_control, POLLIN, 0};
        const double now = now_ms();
        int left = now < spin_until ? 0 : (int)std::max(0.0, g_deadline_ms - now);
        int ready = poll(&p, 1, left);
        if (ready == 0 && now < spin_until && now < g_deadline_ms) continue;
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
        if (got) *got = reply;
        return Fate::OK;
    }
}

// While the worker is frozen nothing may be waiting on the socket: a reply sent ahead of its call (to end
// the next timed call at once) is a violation.
inline Fate nothing_pending() {
    char byte;
    ssize_t n = recv(g_control, &byte, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n > 0) {
        g_violation = "the program sent a message out of turn (a reply before its call)";
        return Fate::VIOLATION;
    }
    return n == 0 ? Fate::GONE : Fate::OK;
}

inline std::string format_call(uint64_t index, double ms) {
    char line[96];
    std::snprintf(line, sizeof line, "%llu %.6f 0.000000", (unsigned long long)index, ms);
    return line;
}

inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

inline double relative_error_of_median(std::vector<double> v) {
    if (v.size() < 4) return 1.0;
    std::sort(v.begin(), v.end());
    double iqr = v[3 * v.size() / 4] - v[v.size() / 4];
    double med = median_of(v);
    return med > 0 ? 1.2533 * (iqr / 1.349) / std::sqrt((double)v.size()) / med : 1.0;
}

// --- the guards and the audits ------------------------------------------------------------------------------

inline uint64_t g_canary_salt = 0;  // the run's secret for the guards' canary (guards.h), drawn in start()

// After a call: a guard that changed ends the run with its record, `overrun` (grader/judge/supervisor_records.py).
inline Fate judge_guards(const Case& c, uint64_t call, const kjguard::Overrun& found) {
    if (!found.found) return Fate::OK;
    const std::string line = kjguard::record(c.name, call, found);
    write_file("overrun", line.data(), line.size(), false);
    return Fate::OVERRUN;
}

// Which timed calls of a benchmark are audited (docs/security.md, "Audits"): a uniformly random subset of
// `size` of its samples, drawn by reservoir sampling as the calls return. The k-th sample is taken with
// probability size / k (each of the first `size` surely), into a slot picked with getrandom() whose earlier call
// is dropped. At the end each of the N samples is audited with probability size / N whatever its position, and
// no decision depends on an earlier one: a program that could tell afterwards that a call was taken (the pause
// while its outputs are copied) learns nothing about any later call. Nothing about the picks reaches the worker.
class Audits {
  public:
    explicit Audits(int size) : size_(std::max(1, size)) {}

    struct Take {
        int slot = -1;  // where the call's outputs go; -1: not taken
        bool drops = false;
        uint64_t dropped = 0;  // the call whose slot it took (its kept outputs are no longer needed)
    };

    Take offer(uint64_t call) {
        ++seen_;
        if ((int)kept_.size() < size_) {
            kept_.push_back(call);
            return {(int)kept_.size() - 1, false, 0};
        }
        const uint64_t pick = random64() % seen_;
        if (pick >= (uint64_t)size_) return {};
        const Take take{(int)pick, true, kept_[pick]};
        kept_[pick] = call;
        return take;
    }

    int size() const { return size_; }
    const std::vector<uint64_t>& kept() const { return kept_; }  // slot by slot

  private:
    int size_;
    uint64_t seen_ = 0;
    std::vector<uint64_t> kept_;
};

// The stop rule's last step: once a benchmark's rule says it has enough samples, each further sample is taken
// with probability 1/2, decided with getrandom() after the call before it (at most MAX_TAIL of them): the last
// call is at no position a program can count to.
constexpr int MAX_TAIL = 8;
inline bool one_more_sample(int* tail) {
    if (*tail >= MAX_TAIL || (random64() & 1) == 0) return false;
    ++*tail;
    return true;
}

// --- the run's start, its cases, its records and its end (both supervisors' main) ------------------------------

// The request from stdin, the worker's pid and deadline, the trusted folder opened; the supervisor made
// non-dumpable (no ptrace, no /proc/<pid>/mem, for anyone but root) and bound to die with the grader.
inline Request start(int control_fd, int worker_pidfd) {
    prctl(PR_SET_DUMPABLE, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    g_control = control_fd;
    g_worker_fd = worker_pidfd;
    Request request = read_request();
    g_worker = request.worker;
    g_done_fd = request.done_fd;
    g_deadline_ms = now_ms() + request.wall_ms + BUDGET_SLACK_MS;
    g_outdir = open(request.outdir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (g_outdir < 0) die(EXIT_INTERNAL, "cannot open the trusted folder " + request.outdir);
    g_canary_salt = random64();
    return request;
}

// A request with "go FD": waits until the grader writes to FD or closes it (it does once no check of another
// grading runs on this GPU, grader/judge/gpu_turn.py), or until the run's deadline.
inline void await_go(const Request& r) {
    if (r.go_fd < 0) return;
    pollfd p{r.go_fd, POLLIN, 0};
    for (double left_ms; (left_ms = g_deadline_ms - now_ms()) > 0;) {
        const int ready = poll(&p, 1, (int)std::min(left_ms, 1e9));
        if (ready > 0 || (ready < 0 && errno != EINTR)) break;
    }
    close(r.go_fd);
}

inline std::string stamped(const std::string& what) {
    char line[200];
    std::snprintf(line, sizeof line, "%s %.6f", what.c_str(), unix_time());
    return line;
}

// The JIT stage (docs/timing.md, "The JIT stage"): after LOADED and before the first case, one untimed call per
// distinct size set of the run, in request order, so that kernels compiled (and autotuned) on their first call
// for a shape do so here and not inside a test. Each call gets the buffers of the first case with its sizes and
// inputs from a key of its own, derived from one the supervisor draws for the stage alone (getrandom): no test
// or benchmark ever sees them, and the call's number is 0, as a test's first draw. Nothing it leaves is kept or
// checked; a crash, a fault or a protocol violation ends the run as in a test. Progress: "jit NAME TIME" before
// the call, "jitted NAME TIME" after it (NAME: that first case). The stage has a budget of its own
// (request.jit_ms), inside which every call must return: past it, "over NAME TIME" is written, the worker killed
// and the run ends. `call_one(c)` makes one untimed call of case c.
template <typename CallOne>
Fate run_jit_stage(const Request& request, CallOne call_one) {
    const uint64_t k0 = random64(), k1 = random64();
    const double run_deadline = g_deadline_ms, until = now_ms() + request.jit_ms;
    g_deadline_ms = std::min(run_deadline, until);
    std::vector<std::vector<int>> seen;
    Fate fate = Fate::OK;
    for (const Case& c : request.cases) {
        if (std::find(seen.begin(), seen.end(), c.ints) != seen.end()) continue;
        const uint64_t n = seen.size();
        seen.push_back(c.ints);
        Case stage = c;
        stage.k0 = kjg::siphash24(k0, k1, 2 * n), stage.k1 = kjg::siphash24(k0, k1, 2 * n + 1);
        append_line("progress", stamped("jit " + c.name));
        fate = call_one(stage);
        if (fate == Fate::GONE && now_ms() >= until) {
            append_line("progress", stamped("over " + c.name));
            signal_worker(SIGKILL);
        }
        if (fate != Fate::OK) break;
        append_line("progress", stamped("jitted " + c.name));
    }
    g_deadline_ms = run_deadline;
    return fate;
}

// Each case in turn, with its progress line, while all goes well; `run(i)` runs case i. With a JIT stage in the
// request, `stage` (run_jit_stage's call_one) runs it first.
template <typename Run, typename Stage>
Fate run_cases(const Request& request, Fate fate, Run run, Stage stage) {
    if (fate == Fate::OK) append_line("progress", "loaded");
    if (fate == Fate::OK && request.jit_ms > 0) fate = run_jit_stage(request, stage);
    for (size_t i = 0; fate == Fate::OK && i < request.cases.size(); ++i) {
        append_line("progress", stamped("case " + request.cases[i].name));
        fate = run(i);
    }
    return fate;
}

// A run without a JIT stage (the CPU track: its library is compiled before the run).
template <typename Run>
Fate run_cases(const Request& request, Fate fate, Run run) {
    if (request.jit_ms > 0) die(EXIT_INTERNAL, "this supervisor has no JIT stage");
    return run_cases(request, fate, run, [](const Case&) { return Fate::OK; });
}

// A benchmark's records: the timing record (header, then one line per sample) and the audited calls, in order.
inline void write_bench_records(const std::string& name, const std::string& header, const std::vector<std::string>& lines,
                                std::vector<uint64_t> audited) {
    std::string text = header + "\n";
    for (const std::string& line : lines) text += line + "\n";
    write_file(name + ".times", text.data(), text.size(), false);
    std::sort(audited.begin(), audited.end());
    std::string list;
    for (uint64_t a : audited) list += std::to_string(a) + "\n";
    write_file(name + ".audits", list.data(), list.size(), false);
}

// The run's end: "done" and EXIT to the worker, or the violation recorded and the worker killed.
inline int finish(Fate fate) {
    if (fate == Fate::OK) {
        char line[64];
        std::snprintf(line, sizeof line, "done %.6f", unix_time());
        append_line("progress", line);
        // Every record is written: the grader may judge them while the worker ends (grader/run/supervised.py).
        if (g_done_fd >= 0) close(g_done_fd);
        kjp::Go go{};
        go.magic = kjp::MAGIC, go.kind = kjp::EXIT;
        thaw();
        send_go(go);
    } else if (fate == Fate::VIOLATION) {
        signal_worker(SIGKILL);
        append_line("violation", g_violation);
    } else if (fate == Fate::OVERRUN) {
        signal_worker(SIGKILL);  // its record is written
    }
    return 0;
}

}  // namespace kjs
