// expect: runtime_error
// message: exited with status 0 in test one_element
// Cheat (10): fakes a finished run: prints harness-style lines to stderr, appends "done" to the harness's
// progress file itself, and exits with status 0 from inside the first call, before any result exists.
// A finished-looking run with missing results is still a runtime error. On the CPU track the progress record
// is the supervisor's, so its own "done" is never seen: the worker simply exited in the first test.
#include <cstdio>
#include <cstdlib>
void solve(const float* input, float* output, int M, int N) {
    std::fprintf(stderr, "kerneljudge harness: all tests passed\n");
    std::printf("done\n");
    if (FILE* f = std::fopen("out/progress", "a")) {
        std::fprintf(f, "done\n");
        std::fclose(f);
    }
    std::fflush(nullptr);
    std::_Exit(0);
}
