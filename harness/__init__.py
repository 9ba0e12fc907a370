"""kerneljudge's untrusted side: the supervised workers (worker.cpp, gpu_worker.cu; grader.run.binaries builds
them) and the profiler's in-process harness (runner.cpp with platform.h; grader.build.runner)."""
