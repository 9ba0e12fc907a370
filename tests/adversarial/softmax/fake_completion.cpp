// expect: runtime_error
// message: results of test one_element are missing
// Cheat (10): fakes a finished run: prints harness-style lines to stderr, appends "done" to the harness's
// progress file itself, and exits with status 0 from inside the first call, before any result exists.
// A finished-looking run with missing results is still a runtime error.
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
