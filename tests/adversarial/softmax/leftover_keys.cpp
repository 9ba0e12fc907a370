// expect: wrong_answer
// message: never written
// Hostile (state that outlives a run): the kernel's keyrings. A key added to the user keyring stays as long
// as the uid has one, so a run could hand data to a later run of the same uid; a key search reaches keys the
// uid can see. This adds a key and searches for one an earlier run left, through raw system calls (no
// libkeyutils). The output is computed only if either worked. Closed by the worker's seccomp filter
// (add_key, request_key and keyctl are refused) and by the sandbox's own session keyring and fresh uid.
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>

static const long KEY_SPEC_USER_KEYRING = -4;
static const long KEYCTL_SEARCH = 10;

static bool keyring_reachable() {
    long added = syscall(SYS_add_key, "user", "kerneljudge-escape-key", "left for later", 14, KEY_SPEC_USER_KEYRING);
    long found = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_USER_KEYRING, "user", "kerneljudge-escape-key", 0);
    return added >= 0 || found >= 0;
}

void solve(const float* input, float* output, int M, int N) {
    static bool escaped = keyring_reachable();
    if (!escaped) return;
    for (int r = 0; r < M; ++r) {
        const float* x = input + (size_t)r * N;
        float* y = output + (size_t)r * N;
        float m = x[0];
        for (int i = 1; i < N; ++i) m = std::fmax(m, x[i]);
        double s = 0;
        for (int i = 0; i < N; ++i) s += std::exp((double)x[i] - m);
        for (int i = 0; i < N; ++i) y[i] = (float)(std::exp((double)x[i] - m) / s);
    }
}
