// expect: runtime_error
// message: exited with status 0
// Crash (13): a static constructor that calls exit(0) as the harness loads the library: a clean exit
// before the first test is still a runtime error. (The message says "in test one_element" although the
// harness never got past loading the library: grader/pipeline.py _judge names the first test without a
// result; _where_it_stopped would say "while loading the library".)
#include <cstdlib>
__attribute__((constructor)) static void on_load() { std::exit(0); }
void solve(const float* input, float* output, int M, int N) {}
