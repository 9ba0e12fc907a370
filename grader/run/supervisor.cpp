// kerneljudge supervisor: the trusted half of a run on the CPU track (docs/security.md, "The boundary").
//
// One call, the shared buffers, the two modes, main. What it shares with the CUDA track's supervisor (the
// request, the trusted folder, clocks, the worker's control, the run's start and end) is supervision.h.
//
// The grader starts it as its own user, outside the sandbox, after it started the worker (harness/worker.cpp)
// in the sandbox. Both share a control socket (SOCK_SEQPACKET, grader/boundary/protocol.h) and a sealed memfd in
// which the call's buffers lie. The supervisor alone holds the secret keys; for every call it
//   1. makes the inputs (grader/boundary/generator.h), poisons the outputs with NaN and writes the guards' canary
//      while the worker is frozen
//      (SIGSTOP, every thread seen stopped in /proc), flushes the caches (timed calls),
//   2. starts ITS clock, thaws the worker (SIGCONT), sends CALL, waits for DONE, freezes the worker again and
//      waits until every thread of it is stopped, and only then stops the clock: work a thread does after
//      DONE is timed, or not done at all,
//   3. checks the guards around every buffer (guards.h: a write past either end ends the run with its record),
//      copies what it must keep (a test's outputs, and what changed in its inputs: input_check.h) into the
//      trusted folder, which the worker cannot see, and draws the audits with getrandom() after the call.
// It writes every record the grader reads, in the formats the grader already reads (grader/judge/pipeline.py).
//
// Usage: supervisor CONTROL_FD MEMORY_FD PIDFD (PIDFD: the worker's, opened by the grader before it could be
// reaped, so a signal never reaches a process that took a dead worker's pid), the request (supervision.h) on
// stdin.
#include <sys/mman.h>
#include <sys/stat.h>

#include "input_check.h"
#include "row_audit.h"
#include "supervision.h"

namespace {

using namespace kjs;

// One call, timed by the supervisor's clock from before the thaw to after the freeze. `kind`: CALL or EMPTY.
Fate call(const Case* c, uint32_t kind, uint64_t index, double* ms) {
    kjp::Go go{};
    go.magic = kjp::MAGIC, go.kind = kind, go.call = index;
    if (c) {
        go.buffers = (uint32_t)c->buffers.size(), go.ints = (uint32_t)c->ints.size(), go.set_stride = c->set_bytes;
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
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        const Buffer& b = c.buffers[j];
        if (b.is_input)
            kjg::fill(b.dtype, buffer(b), b.count, input_seed(c, index, j), b.low_bits, b.scale_bits);
        else
            kjg::poison(b.dtype, buffer(b), b.count);
    }
    kjguard::fill(reinterpret_cast<unsigned char*>(g_region), 0, c.guards, g_canary_salt);
}

// After call number `call`: its record and the run's end if it wrote into a guard.
Fate check_guards(const Case& c, uint64_t call) {
    return judge_guards(c, call, kjguard::scan(reinterpret_cast<unsigned char*>(g_region), 0, c.guards, g_canary_salt));
}

// A test's call into the trusted folder: its outputs, and what changed in its inputs (input_check.h).
void keep(const Case& c, uint64_t call, const std::string& stem) {
    std::vector<Changes> changes;
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        if (c.buffers[j].is_input) {
            changes.push_back(changed_elements(c.buffers[j], input_seed(c, call, j), buffer(c.buffers[j])));
            continue;
        }
        write_file(stem + "." + std::to_string(j) + ".bin", buffer(c.buffers[j]), c.buffers[j].count * bytes(c.buffers[j]),
                   false);
    }
    write_input_changes(c, stem, changes);
}

// An audited call's outputs (in buffer order), copied out of the shared buffers when the draw took it (Audits).
using Outputs = std::vector<std::vector<char>>;

Outputs copy_outputs(const Case& c) {
    Outputs kept;
    for (const Buffer& b : c.buffers)
        if (!b.is_input) {
            const char* from = static_cast<const char*>(buffer(b));
            kept.emplace_back(from, from + b.count * bytes(b));
        }
    return kept;
}

// An audited call's outputs into the trusted folder once the benchmark's calls are over: whole, or for a
// row-audited case the rows drawn now, with the scan of every element (row_audit.h).
void keep_audit(const Case& c, const Outputs& kept, const std::string& stem) {
    const uint64_t seed = random64();
    std::vector<Unfinished> scans;
    size_t next = 0;
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        const Buffer& b = c.buffers[j];
        if (b.is_input) continue;
        const std::vector<char>& data = kept.at(next++);
        const std::string name = stem + "." + std::to_string(j) + ".bin";
        if (!c.rows_drawn) {
            write_file(name, data.data(), data.size(), false);
            continue;
        }
        scans.push_back(scan_output(b, data.data()));
        const std::vector<char> rows = gather_rows(c, b, seed, data.data());
        write_file(name, rows.data(), rows.size(), false);
    }
    if (c.rows_drawn) write_scan(c, stem, seed, scans);
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
// Correctness: DRAWS calls on fresh inputs; after each, its outputs are kept and its inputs checked (keep).
Fate run_check(const Case& c) {
    for (int draw = 0; draw < c.draws; ++draw) {
        prepare(c, (uint64_t)draw);
        append_line("progress", "call " + c.name + " " + std::to_string(draw));
        double ms = 0;
        Fate fate = call(&c, kjp::CALL, (uint64_t)draw, &ms);
        if (fate == Fate::OK) fate = check_guards(c, (uint64_t)draw);
        if (fate != Fate::OK) return fate;
        append_line("progress", "returned " + c.name + " " + std::to_string(draw));
        keep(c, (uint64_t)draw, c.name + ".d" + std::to_string(draw));
        append_line(c.name + ".calls", format_call((uint64_t)draw, ms));
    }
    return Fate::OK;
}
// Timing (docs/timing.md): empty calls measure the handshake; warm-up until three calls agree within 2%;
// samples until the median is known to TARGET_RSE or the budget is spent, then a random tail (one_more_sample).
// Every call gets fresh inputs, NaN outputs, fresh guards and a cold cache, and its guards are checked after
// it. The audited samples are drawn as the calls return (Audits, supervision.h): a sample taken has its outputs
// copied into its slot, in place of the call whose slot it took; the slots reach the trusted folder at the end.
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
    Audits audits(c.audits);
    std::vector<Outputs> slots(audits.size());
    std::vector<std::string> lines;
    auto one_call = [&](bool sample, double* ms) {
        prepare(c, index);
        flush_cache();
        Fate fate = call(&c, kjp::CALL, index, ms);
        if (fate == Fate::OK) fate = check_guards(c, index);
        if (fate != Fate::OK) return fate;
        const Audits::Take take = sample ? audits.offer(index) : Audits::Take{};
        if (take.slot >= 0) slots[take.slot] = copy_outputs(c);
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
    int tail = 0;
    while (!enough() || one_more_sample(&tail)) {
        double ms = 0;
        const uint64_t this_call = index;
        Fate fate = one_call(true, &ms);
        if (fate != Fate::OK) return fate;
        samples.push_back(ms);
        lines.push_back(format_call(this_call, ms));
    }
    for (size_t slot = 0; slot < audits.kept().size(); ++slot)
        keep_audit(c, slots[slot], c.name + ".a" + std::to_string(audits.kept()[slot]));
    char header[200];
    std::snprintf(header, sizeof header, "mode single batch 1 overhead_ms %.6f tail_overhead_ms 0.000000 warmup %d",
                  median_of(empty), warmup);
    write_bench_records(c.name, header, lines, audits.kept());
    return Fate::OK;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) die(EXIT_INTERNAL, "usage: supervisor CONTROL_FD MEMORY_FD PIDFD < request");
    const int memory = std::atoi(argv[2]);
    Request request = start(std::atoi(argv[1]), std::atoi(argv[3]));

    struct stat info;
    if (fstat(memory, &info) != 0) die(EXIT_INTERNAL, "cannot stat the shared memory");
    g_region_bytes = (size_t)info.st_size;
    for (const Case& c : request.cases)
        if (c.set_bytes > g_region_bytes) die(EXIT_INTERNAL, "the shared memory is too small");
    if (g_region_bytes) {
        void* p = mmap(nullptr, g_region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, memory, 0);
        if (p == MAP_FAILED) die(EXIT_INTERNAL, std::string("cannot map the shared memory: ") + std::strerror(errno));
        g_region = static_cast<char*>(p);
    }

    append_line("progress", "loading");
    Fate fate = receive(kjp::LOADED, 0);
    if (fate == Fate::OK) fate = freeze();
    if (fate == Fate::OK) await_go(request);
    fate = run_cases(request, fate, [&](size_t i) {
        const Case& c = request.cases[i];
        return c.mode == "check" ? run_check(c) : run_bench(c);
    });
    return finish(fate);
}
