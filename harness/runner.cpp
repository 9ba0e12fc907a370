// kerneljudge harness: the small untrusted program that runs one submission inside the sandbox.
//
// Built twice from this one file: with nvcc and -DKJ_CUDA for the CUDA track (device buffers), with g++ for
// the CPU track (host buffers). It reads a request on stdin, dlopens the compiled submission, and for each
// case makes the inputs from seeds (grader/run/generator.h, the one generator), fills every output with NaN,
// calls `kerneljudge_entry`, waits for the whole device and copies the outputs out at once. Outputs and the
// inputs as it last saw them go to raw files of their element type in the output folder; timings (timing.h) go to text
// files. It never holds an expected output: the trusted grader judges everything after this process exits.
//
// Request (whitespace-separated tokens):
//   library PATH  outdir PATH
//   case NAME check SEED DRAWS | case NAME bench SEED MIN_SAMPLES MAX_SAMPLES BUDGET_MS AUDITS
//   ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
//   DTYPE: f32, f16, bf16 or i32 (grader/run/request.py; generator.h draws and poisons each)
//   ... more cases ...   end
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "platform.h"
#include "timing.h"

namespace {

using kj::EntryFn;

struct Buffer {
    bool is_input = false;
    kjg::Dtype dtype = kjg::Dtype::F32;
    size_t count = 0;
    uint32_t low_bits = 0, scale_bits = 0;
    size_t bytes() const { return count * kjg::element_bytes(dtype); }
};

struct Case {
    std::string name, mode;
    uint64_t seed = 0;
    int draws = 0;
    kj::BenchPlan plan;
    std::vector<int> ints;
    std::vector<Buffer> buffers;
};

std::string g_outdir;

void append_line(const std::string& file, const std::string& line) {
    FILE* f = std::fopen((g_outdir + "/" + file).c_str(), "a");
    if (!f) kj::fail("cannot write " + file);
    std::fprintf(f, "%s\n", line.c_str());
    std::fclose(f);
}

void write_bytes(const std::string& file, const std::vector<unsigned char>& host) {
    FILE* f = std::fopen((g_outdir + "/" + file).c_str(), "wb");
    if (!f || std::fwrite(host.data(), 1, host.size(), f) != host.size()) kj::fail("cannot write " + file);
    std::fclose(f);
}

// Wall-clock seconds, so the grader can match its NVML samples to each case.
double unix_time() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

uint64_t urandom64() {
    uint64_t value = 0;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0 || read(fd, &value, sizeof value) != (ssize_t)sizeof value) kj::fail("cannot read /dev/urandom");
    close(fd);
    return value;
}

Case read_case(std::istream& in) {
    Case c;
    in >> c.name >> c.mode >> std::hex >> c.seed >> std::dec;
    if (c.mode == "check") {
        in >> c.draws;
    } else if (c.mode == "bench") {
        in >> c.plan.min_samples >> c.plan.max_samples >> c.plan.budget_ms >> c.plan.audits;
    } else {
        kj::fail("unknown case mode " + c.mode);
    }
    std::string word;
    size_t n = 0;
    in >> word >> n;
    if (word != "ints") kj::fail("expected ints");
    c.ints.resize(n);
    for (auto& v : c.ints) in >> v;
    in >> word >> n;
    if (word != "buffers") kj::fail("expected buffers");
    c.buffers.resize(n);
    for (auto& b : c.buffers) {
        std::string dtype;
        in >> word >> dtype >> b.count;
        b.is_input = word == "in";
        if (!kjg::parse_dtype(dtype, &b.dtype)) kj::fail("unknown element type " + dtype + " in the request");
        if (b.is_input) in >> b.low_bits >> b.scale_bits;
    }
    if (!in) kj::fail("malformed request");
    return c;
}

// One call's inputs: fresh values for call number `call` in `inputs`, the type's poison in `outputs`.
void prepare_call(const Case& c, uint64_t call, kj::Ptrs& ptrs) {
    for (size_t j = 0; j < c.buffers.size(); ++j) {
        const Buffer& b = c.buffers[j];
        if (b.is_input)
            kj::fill_input(ptrs[j], b.dtype, b.count, kjg::tensor_seed(c.seed, call, j), b.low_bits, b.scale_bits);
        else
            kj::poison_output(ptrs[j], b.dtype, b.count);
    }
}

kj::Ptrs allocate(const Case& c) {
    kj::Ptrs ptrs;
    for (const Buffer& b : c.buffers) ptrs.push_back(kj::alloc_bytes(b.bytes()));
    return ptrs;
}

void release(kj::Ptrs& ptrs) {
    for (void* p : ptrs) kj::free_buffer(p);
    ptrs.clear();
}

// Correctness: DRAWS calls, each on fresh inputs; every buffer is copied out right after the call.
void run_check(const Case& c, EntryFn entry) {
    kj::Ptrs ptrs = allocate(c);
    std::vector<std::vector<unsigned char>> host(c.buffers.size());
    for (int draw = 0; draw < c.draws; ++draw) {
        prepare_call(c, draw, ptrs);
        kj::device_synchronize("preparing " + c.name);
        append_line("progress", "call " + c.name + " " + std::to_string(draw));
        kj::CallTimes t = kj::timed_call(entry, ptrs, c.ints);
        for (size_t j = 0; j < c.buffers.size(); ++j) {
            host[j].resize(c.buffers[j].bytes());
            kj::copy_to_host(host[j].data(), ptrs[j], host[j].size());
        }
        append_line("progress", "returned " + c.name + " " + std::to_string(draw));
        for (size_t j = 0; j < c.buffers.size(); ++j)
            write_bytes(c.name + ".d" + std::to_string(draw) + "." + std::to_string(j) + ".bin", host[j]);
        append_line(c.name + ".calls", kj::format_times(draw, t));
    }
    release(ptrs);
}

// Timing: see timing.h. Each timed call gets fresh inputs; a few calls, picked after they return, and the
// final call, always, are written out for the grader to audit.
void run_bench(const Case& c, EntryFn entry) {
    size_t bytes_per_call = 0;
    for (const Buffer& b : c.buffers) bytes_per_call += b.bytes();
    kj::BenchPlan plan = c.plan;
    plan.bytes_per_call = bytes_per_call;
    uint64_t audits_left = plan.audits;
    auto prepare = [&](uint64_t call, kj::Ptrs& ptrs) { prepare_call(c, call, ptrs); };
    auto audit = [&](uint64_t call, kj::Ptrs& ptrs, bool force) {
        // Random picks never take the last audit: it is the final call's, whatever chance did before.
        if (audits_left == 0 || (!force && (audits_left <= 1 || urandom64() % 3 != 0))) return;
        --audits_left;
        for (size_t j = 0; j < c.buffers.size(); ++j) {
            if (c.buffers[j].is_input) continue;
            std::vector<unsigned char> host(c.buffers[j].bytes());
            kj::copy_to_host(host.data(), ptrs[j], host.size());
            write_bytes(c.name + ".a" + std::to_string(call) + "." + std::to_string(j) + ".bin", host);
        }
        append_line(c.name + ".audits", std::to_string(call));
    };
    auto alloc = [&]() { return allocate(c); };
    kj::BenchResult result = kj::bench(plan, entry, c.ints, alloc, prepare, audit, release);
    append_line(c.name + ".times", result.header);
    for (const std::string& line : result.lines) append_line(c.name + ".times", line);
}

}  // namespace

int main() {
    std::string word, library;
    std::cin >> word >> library;
    if (word != "library") kj::fail("expected library");
    std::cin >> word >> g_outdir;
    if (word != "outdir") kj::fail("expected outdir");
    std::vector<Case> cases;
    while (std::cin >> word && word != "end") {
        if (word != "case") kj::fail("expected case, got " + word);
        cases.push_back(read_case(std::cin));
    }
    kj::init_device();
    append_line("progress", "loading");
    void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) kj::fail(std::string("cannot load the submission: ") + dlerror());
    auto entry = reinterpret_cast<EntryFn>(dlsym(handle, "kerneljudge_entry"));
    if (!entry) kj::fail("the submission has no kerneljudge_entry");
    append_line("progress", "loaded");
    for (const Case& c : cases) {
        append_line("progress", "case " + c.name + " " + std::to_string(unix_time()));
        if (c.mode == "check")
            run_check(c, entry);
        else
            run_bench(c, entry);
    }
    append_line("progress", "done " + std::to_string(unix_time()));
    std::fflush(nullptr);
    std::_Exit(0);  // skip the submission's static destructors: they may hang or lie
}
