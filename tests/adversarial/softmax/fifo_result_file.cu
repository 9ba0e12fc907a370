// expect: wrong_answer
// message: never written
// time_limit: 5
// CUDA track too: nothing in out/ is read any more (the supervisor's records are elsewhere), so the FIFO is
// ignored and the output it never wrote is what the verdict says.
// Hostile (10, against the grader itself): replaces the harness's out/progress file with a named pipe
// (FIFO). The harness blocks on it and is killed at the time limit; then the trusted grader opens it to
// read the progress, and with no writer at the other end that open never returns. The test grades this
// in a thread and fails it if the grader does not answer in time (and then unblocks it).
#include <sys/stat.h>
#include <unistd.h>

void solve(const float* input, float* output, int M, int N) {
    unlink("out/progress");
    mkfifo("out/progress", 0666);
}
