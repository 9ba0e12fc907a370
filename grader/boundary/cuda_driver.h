// The few CUDA driver calls a run needs for shared device memory (the virtual-memory API), fetched through the
// runtime (cudaGetDriverEntryPointByVersion) so neither program links libcuda at build time: the build host
// need not have a driver or its stub, and the one libcuda loaded is the driver's own.
//   kj::driver<decltype(&cuMemMap)>("cuMemMap")(...)   or, shorter, KJ_DRIVER(cuMemMap)(...)
#pragma once
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace kj {

template <typename Fn>
Fn driver(const char* name) {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess || !fn) {
        std::fprintf(stderr, "kerneljudge: the CUDA driver has no %s\n", name);
        std::_Exit(70);
    }
    return reinterpret_cast<Fn>(fn);
}

// A driver call's result as text.
inline std::string driver_error(CUresult result) {
    const char* text = nullptr;
    static auto get = driver<decltype(&cuGetErrorString)>("cuGetErrorString");
    get(result, &text);
    return text ? text : "unknown error " + std::to_string((int)result);
}

}  // namespace kj

#define KJ_DRIVER(name) (kj::driver<decltype(&name)>(#name))
