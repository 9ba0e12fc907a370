// expect: runtime_error
// message: exited with status 0 in test one_element
// Both tracks: the supervisor writes the progress record in its own folder; out/ is not read.
// Cheat (10): prints harness-style lines, appends "done" to the harness's progress file itself, and exits
// with status 0 from inside the first call.
#include <cstdio>
#include <cstdlib>
void solve(const float* input, float* output, int M, int N) {
    std::fprintf(stderr, "kerneljudge harness: all tests passed\n");
    if (FILE* f = std::fopen("out/progress", "a")) {
        std::fprintf(f, "done\n");
        std::fclose(f);
    }
    std::fflush(nullptr);
    std::_Exit(0);
}
