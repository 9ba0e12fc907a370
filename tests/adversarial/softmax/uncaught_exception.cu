// expect: runtime_error
// message: SIGABRT
// Crash (9): throws a C++ exception out of solve.
#include <stdexcept>
void solve(const float* input, float* output, int M, int N) {
    throw std::runtime_error("kerneljudge: all tests passed (thrown, not earned)");
}
