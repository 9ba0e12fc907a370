// expect: timeout
// time_limit: 5
// message: time limit
// Hang (9): the host side sleeps far past the time limit.
#include <unistd.h>
void solve(const float* input, float* output, int M, int N) {
    for (;;) sleep(1000);
}
