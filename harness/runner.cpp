// kerneljudge in-process harness: the program the profiler runs under Nsight Compute (grader/profile/capture.py),
// one call of a submission with no supervisor around it. Gradings run the supervised worker instead
// (harness/worker.cpp, harness/gpu_worker.cu).
//
// Built twice from this one file: with nvcc and -DKJ_CUDA for the CUDA track (device buffers), with g++ for
// the CPU track (host buffers). It reads a request on stdin, dlopens the compiled submission, and for each
// case makes the inputs from seeds (grader/boundary/generator.h, the one generator), fills every output with NaN,
// calls `kerneljudge_entry`, waits for the whole device and copies the outputs out at once. Outputs and the
// inputs as it last saw them go to raw files of their element type in the output folder, each call's times to
// a text file. It never holds an expected output.
//
// Request (whitespace-separated tokens):
//   library PATH  outdir PATH
//   case NAME check SEED DRAWS
//   ints K v1..vK   buffers B   then B times: in DTYPE COUNT LOW_BITS SCALE_BITS | out DTYPE COUNT
//   DTYPE: f32, f16, bf16 or i32 (grader/run/request.py; generator.h draws and poisons each)
//   ... more cases ...   end
#include <dlfcn.h>

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

Case read_case(std::istream& in) {
    Case c;
    in >> c.name >> c.mode >> std::hex >> c.seed >> std::dec;
    if (c.mode != "check") kj::fail("unknown case mode " + c.mode + " (the profiler's harness only checks)");
    in >> c.draws;
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
        run_check(c, entry);
    }
    append_line("progress", "done " + std::to_string(unix_time()));
    std::fflush(nullptr);
    std::_Exit(0);  // skip the submission's static destructors: they may hang or lie
}
