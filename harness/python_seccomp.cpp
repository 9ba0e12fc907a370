// The seccomp filter of harness/seccomp.h for the Python worker (harness/python_worker.py), as a small shared
// library it loads with ctypes before it imports the submission: the same deny list, with the calls that start
// programs let through (Processes::ALLOWED), since Triton's JIT runs ptxas and the C compiler. Landlock
// (harness/landlock.py) limits which programs those may be.
#include "seccomp.h"

extern "C" int kerneljudge_install_seccomp_allowing_processes() {
    return kj::install_seccomp(kj::Processes::ALLOWED) ? 0 : -1;
}
