// The worker's seccomp filter, installed before the submission is loaded (harness/worker.cpp), written by
// hand with <linux/seccomp.h> and <linux/filter.h> (no libseccomp needed).
//
// A deny list over a default of allow: glibc, the C++ runtime and OpenMP use a wide and version-dependent set
// of system calls, and an allow list that misses one turns an honest kernel into a crash. What it refuses
// (EPERM unless noted) is what a computing kernel never needs and an attack does: other processes
// (ptrace, process_vm_*, pidfd_*, kcmp; signals to any process but its own), new processes (fork, vfork,
// clone without CLONE_THREAD, execve; clone3 answers ENOSYS so glibc falls back to clone, whose flags a
// filter can read), namespaces and mounts, the kernel's objects that outlive a run (SysV IPC, POSIX message
// queues, keyrings), sockets of every family, io_uring (its own path around this filter), bpf, perf events,
// userfaultfd, personality, CPU affinity, the clocks, modules, and sessions and process groups. Any other
// architecture or the x32 ABI kills the process.
//
// The Python worker (harness/python_worker.py, through harness/python_seccomp.cpp) installs it with
// Processes::ALLOWED: Triton runs ptxas and the C compiler as child processes, so fork, vfork, execve and clone
// of a process (still never with a namespace flag) are let through there, and Landlock (harness/landlock.py)
// limits which programs may be executed.
#pragma once
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <vector>

// System calls newer than some distributions' kernel headers: since 5.1 every architecture numbers them alike.
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal 424
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#define __NR_io_uring_enter 426
#define __NR_io_uring_register 427
#endif
#ifndef __NR_open_tree
#define __NR_open_tree 428
#define __NR_move_mount 429
#define __NR_fsopen 430
#define __NR_fsconfig 431
#define __NR_fsmount 432
#define __NR_fspick 433
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif
#ifndef __NR_clone3
#define __NR_clone3 435
#endif
#ifndef __NR_pidfd_getfd
#define __NR_pidfd_getfd 438
#endif
#ifndef __NR_process_madvise
#define __NR_process_madvise 440
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif

namespace kj {

#if defined(__x86_64__)
constexpr unsigned FILTER_ARCH = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr unsigned FILTER_ARCH = AUDIT_ARCH_AARCH64;
#else
#error "the worker's seccomp filter knows x86-64 and aarch64 only"
#endif

constexpr unsigned NAMESPACE_FLAGS = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER |
                                     CLONE_NEWPID | CLONE_NEWNET;

inline const std::vector<long>& denied_syscalls() {
    static const std::vector<long> list = {
        __NR_ptrace, __NR_process_vm_readv, __NR_process_vm_writev, __NR_kcmp, __NR_pidfd_open,
        __NR_pidfd_getfd, __NR_pidfd_send_signal, __NR_tkill,
        __NR_mount, __NR_umount2, __NR_pivot_root, __NR_chroot, __NR_unshare, __NR_setns, __NR_open_tree,
        __NR_move_mount, __NR_fsopen, __NR_fsconfig, __NR_fsmount, __NR_fspick, __NR_mount_setattr,
        __NR_open_by_handle_at, __NR_name_to_handle_at,
        __NR_shmget, __NR_shmat, __NR_shmctl, __NR_shmdt, __NR_msgget, __NR_msgsnd, __NR_msgrcv, __NR_msgctl,
        __NR_semget, __NR_semop, __NR_semctl, __NR_semtimedop, __NR_mq_open, __NR_mq_unlink, __NR_mq_timedsend,
        __NR_mq_timedreceive, __NR_mq_notify, __NR_mq_getsetattr,
        __NR_add_key, __NR_request_key, __NR_keyctl,
        __NR_socket, __NR_socketpair,
        __NR_io_uring_setup, __NR_io_uring_enter, __NR_io_uring_register,
        __NR_bpf, __NR_perf_event_open, __NR_userfaultfd, __NR_personality, __NR_fanotify_init,
        __NR_sched_setaffinity, __NR_settimeofday, __NR_clock_settime, __NR_clock_adjtime, __NR_adjtimex,
        __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_kexec_load, __NR_kexec_file_load,
        __NR_reboot, __NR_swapon, __NR_swapoff, __NR_acct, __NR_quotactl,
        __NR_setsid, __NR_setpgid, __NR_process_madvise,
    };
    return list;
}

// What starts another program: refused unless the worker's JIT needs it (Processes::ALLOWED).
inline const std::vector<long>& process_syscalls() {
    static const std::vector<long> list = {
        __NR_execve, __NR_execveat,
#ifdef __NR_fork
        __NR_fork,
#endif
#ifdef __NR_vfork
        __NR_vfork,
#endif
    };
    return list;
}

enum class Processes { REFUSED, ALLOWED };

// Installs the filter in this process (every thread created later inherits it); false if the kernel refused.
inline bool install_seccomp(Processes processes = Processes::REFUSED) {
    using F = sock_filter;
    const unsigned own_pid = (unsigned)getpid();
    const unsigned nr = offsetof(seccomp_data, nr), arch = offsetof(seccomp_data, arch);
    const unsigned arg0 = offsetof(seccomp_data, args[0]);  // low 32 bits on a little-endian machine
    const F allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    const F refuse = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
    std::vector<F> prog = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arch),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FILTER_ARCH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, nr),
    };
#if defined(__x86_64__)
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u, 0, 1));  // the x32 ABI
    prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS));
#endif
    std::vector<long> denied = denied_syscalls();
    if (processes == Processes::REFUSED) denied.insert(denied.end(), process_syscalls().begin(), process_syscalls().end());
    for (long call : denied) {
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)call, 0, 1));
        prog.push_back(refuse);
    }
    prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1));
    prog.push_back(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS));
    // clone: threads only (CLONE_THREAD set, no namespace flag); with processes allowed, any clone without a
    // namespace flag. The other paths keep the number in A.
    if (processes == Processes::ALLOWED) {
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4));
        prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0));
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NAMESPACE_FLAGS, 1, 0));
    } else {
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 5));
        prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0));
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, NAMESPACE_FLAGS, 2, 0));
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1));
    }
    prog.push_back(allow);
    prog.push_back(refuse);
    // Signals: only to its own process (raise, abort and pthread_kill use tgkill with its pid).
    for (long call : {(long)__NR_kill, (long)__NR_tgkill, (long)__NR_rt_sigqueueinfo, (long)__NR_rt_tgsigqueueinfo}) {
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)call, 0, 4));
        prog.push_back(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg0));
        prog.push_back(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, own_pid, 0, 1));
        prog.push_back(allow);
        prog.push_back(refuse);
    }
    prog.push_back(allow);
    sock_fprog fprog{(unsigned short)prog.size(), prog.data()};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
    return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog) == 0;
}

}  // namespace kj
