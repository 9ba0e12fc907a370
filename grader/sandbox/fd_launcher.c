// kerneljudge fd launcher: how a program in a container gets the file descriptors the grader passes it
// (grader/sandbox/docker_fds.py; docs/container.md, "Descriptors into the container").
//
// A container is started by the engine, not by the grader, so it inherits none of the grader's descriptors.
// This launcher runs first in the container, as the program's own process: it connects to the grader's
// listening socket (a private folder bind-mounted read-only into this container alone), receives the
// descriptors in one message (SCM_RIGHTS), puts each at the number the grader gave it, and execs the program,
// which finds them where the local sandbox would have left them (subprocess's pass_fds). The grader reads this
// process's pid from the connection (SO_PEERCRED: the kernel's, in the grader's PID namespace) while it waits
// here for the descriptors, and the exec keeps that pid: the pid is the program's.
//
// Usage: fd_launcher SOCKET COUNT FD1 .. FDn PROGRAM [ARGS...] (COUNT may be 0: only the pid is wanted). Built static on the host (no library of the
// image is needed). Any failure: a line on stderr and exit status 127, as for a program that cannot start.
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define MAX_FDS 16

static void fail(const char* what) {
    fprintf(stderr, "kerneljudge sandbox: %s: %s\n", what, strerror(errno));
    _exit(127);
}

int main(int argc, char** argv) {
    if (argc < 4) {
        errno = EINVAL;
        fail("usage: fd_launcher SOCKET COUNT FD... PROGRAM [ARGS...]");
    }
    const int count = atoi(argv[2]);
    if (count < 0 || count > MAX_FDS || argc < 4 + count) {
        errno = EINVAL;
        fail("a bad descriptor count");
    }
    int targets[MAX_FDS], spare = 3;  // every descriptor of this launcher's own is kept above every target
    for (int i = 0; i < count; ++i) {
        targets[i] = atoi(argv[3 + i]);
        if (targets[i] < 3) {
            errno = EINVAL;
            fail("a descriptor number below 3");
        }
        if (targets[i] >= spare) spare = targets[i] + 1;
    }

    int made = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    int conn = made < 0 ? -1 : fcntl(made, F_DUPFD_CLOEXEC, spare);
    if (conn < 0) fail("cannot make a socket");
    close(made);
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(argv[1]) >= sizeof address.sun_path) {
        errno = ENAMETOOLONG;
        fail("the grader's socket path");
    }
    strcpy(address.sun_path, argv[1]);
    if (connect(conn, (struct sockaddr*)&address, sizeof address) != 0) fail("cannot reach the grader's socket");

    char byte;
    struct iovec data = {&byte, 1};
    union {
        char buffer[CMSG_SPACE(sizeof(int) * MAX_FDS)];
        struct cmsghdr align;
    } control;
    struct msghdr message = {.msg_iov = &data, .msg_iovlen = 1};
    message.msg_control = control.buffer, message.msg_controllen = sizeof control.buffer;
    ssize_t got = recvmsg(conn, &message, MSG_CMSG_CLOEXEC);
    if (got != 1) fail("the grader sent no descriptors");
    struct cmsghdr* c = CMSG_FIRSTHDR(&message);
    const int sent = c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS
                         ? (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int)) : 0;
    if (sent != count || (message.msg_flags & MSG_CTRUNC)) {
        errno = EPROTO;
        fail("the grader sent the wrong descriptors");
    }
    int received[MAX_FDS];
    if (count) memcpy(received, CMSG_DATA(c), sizeof(int) * count);
    for (int i = 0; i < count; ++i) {  // up and out of the way first: a received one may sit on a target
        int moved = fcntl(received[i], F_DUPFD_CLOEXEC, spare);
        if (moved < 0) fail("cannot move a descriptor");
        close(received[i]);
        received[i] = moved;
    }
    for (int i = 0; i < count; ++i) {  // dup2 leaves the target without close-on-exec: the program keeps it
        if (dup2(received[i], targets[i]) < 0) fail("cannot place a descriptor");
        close(received[i]);
    }
    close(conn);
    execvp(argv[3 + count], argv + 3 + count);  // a bare name is looked up on the image's PATH, as by the engine
    fail("cannot start the program");
}
