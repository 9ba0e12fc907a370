// The few operations the profiler's harness (runner.cpp) needs from the device it runs on: memory, the input
// generator, poisoning, copies, a timed call. Buffers are untyped bytes; the element type (kjg::Dtype: float32,
// float16, bfloat16, int32) only matters to the generator and the poison. The CUDA track builds the first half
// (-DKJ_CUDA), the CPU track the second; runner.cpp is written against these names only.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "generator.h"

namespace kj {

using EntryFn = void (*)(void**, const int*);
using Ptrs = std::vector<void*>;  // one call's buffers, in signature order

struct CallTimes {
    double call_ms = 0;  // from just before the call to the end of the work it left on the caller's stream
    double tail_ms = 0;  // from there until the whole device was idle (work left running on other streams)
};

inline std::string format_times(uint64_t index, const CallTimes& t) {
    char line[96];
    std::snprintf(line, sizeof line, "%llu %.6f %.6f", (unsigned long long)index, t.call_ms, t.tail_ms);
    return line;
}

inline void call_entry(EntryFn entry, std::vector<void*>& ptrs, const std::vector<int>& ints) {
    entry(ptrs.data(), ints.data());
}

[[noreturn]] inline void fail(const std::string& what) {
    std::fprintf(stderr, "kerneljudge harness: %s\n", what.c_str());
    std::fflush(stderr);
    std::_Exit(3);
}

#ifdef KJ_CUDA
}  // namespace kj
#include <cuda_runtime.h>
namespace kj {

inline void check(cudaError_t error, const std::string& during) {
    if (error != cudaSuccess) fail("CUDA error during " + during + ": " + cudaGetErrorString(error));
}

__global__ void fill_kernel(void* out, size_t n, kjg::Dtype dtype, uint64_t seed, uint32_t low, uint32_t scale) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        kjg::write_element(dtype, out, i, seed, low, scale);
}

inline void init_device() {
    check(cudaSetDevice(0), "device start");
    check(cudaFree(nullptr), "device start");
}

inline void* alloc_bytes(size_t bytes) {
    void* p = nullptr;
    check(cudaMalloc(&p, std::max<size_t>(bytes, 4)), "allocating the harness's buffers");
    return p;
}

inline void free_buffer(void* p) { check(cudaFree(p), "freeing the harness's buffers"); }

inline void fill_input(void* p, kjg::Dtype dtype, size_t n, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
    fill_kernel<<<1024, 256>>>(p, n, dtype, seed, low_bits, scale_bits);
    check(cudaGetLastError(), "generating inputs");
}

__global__ void poison_kernel(void* p, size_t n, kjg::Dtype dtype) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        kjg::write_poison(dtype, p, i);
}

inline void poison_output(void* p, kjg::Dtype dtype, size_t n) {
    poison_kernel<<<1024, 256>>>(p, n, dtype);
    check(cudaGetLastError(), "poisoning outputs");
}

inline void device_synchronize(const std::string& during) { check(cudaDeviceSynchronize(), during); }

inline void copy_to_host(void* host, const void* device, size_t bytes) {
    check(cudaMemcpy(host, device, bytes, cudaMemcpyDeviceToHost), "copying results out");
}

struct Events {
    cudaEvent_t start, returned, idle;
    Events() {
        check(cudaEventCreate(&start), "creating events");
        check(cudaEventCreate(&returned), "creating events");
        check(cudaEventCreate(&idle), "creating events");
    }
};

inline Events& events() {
    static Events e;
    return e;
}

// Events on the stream the submission is called on (the legacy default stream); then the whole device is
// synchronised and a third event measures how long work outlived the call (side streams).
template <typename Work>
CallTimes timed(Work work, const std::string& during) {
    Events& e = events();
    check(cudaEventRecord(e.start, 0), during);
    work();
    check(cudaEventRecord(e.returned, 0), during);
    check(cudaGetLastError(), during);
    check(cudaDeviceSynchronize(), during);
    check(cudaEventRecord(e.idle, 0), during);
    check(cudaEventSynchronize(e.idle), during);
    float call = 0, tail = 0;
    check(cudaEventElapsedTime(&call, e.start, e.returned), during);
    check(cudaEventElapsedTime(&tail, e.returned, e.idle), during);
    return {call, tail};
}

#else  // CPU track

inline void init_device() {}

inline void* alloc_bytes(size_t bytes) {
    void* p = std::malloc(std::max<size_t>(bytes, 4));
    if (!p) fail("out of host memory for the harness's buffers");
    return p;
}

inline void free_buffer(void* p) { std::free(p); }

inline void fill_input(void* p, kjg::Dtype dtype, size_t n, uint64_t seed, uint32_t low_bits, uint32_t scale_bits) {
    kjg::fill(dtype, p, n, seed, low_bits, scale_bits);
}

inline void poison_output(void* p, kjg::Dtype dtype, size_t n) { kjg::poison(dtype, p, n); }

inline void device_synchronize(const std::string&) {}

inline void copy_to_host(void* host, const void* source, size_t bytes) { std::memcpy(host, source, bytes); }

template <typename Work>
CallTimes timed(Work work, const std::string&) {
    auto start = std::chrono::steady_clock::now();
    work();
    auto end = std::chrono::steady_clock::now();
    return {std::chrono::duration<double, std::milli>(end - start).count(), 0.0};
}

#endif

inline CallTimes timed_call(EntryFn entry, std::vector<void*>& ptrs, const std::vector<int>& ints) {
    return timed([&] { call_entry(entry, ptrs, ints); }, "the submission's solve");
}

}  // namespace kj
