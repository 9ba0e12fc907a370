// expect: runtime_error
// message: host files shown: 0 of
// Hostile (host): prints files and folders of the host into its output, which the verdict quotes: the
// folder the repository lies in (the suite puts its path in place of the marker below), the password and
// host name files, the OS release, the licences under /usr/share, /opt, /home, /root and /var/log. Then it
// aborts, so the verdict shows the end of what it printed. In the minimal root none of them exists: its last line
// counts what it could show, and nothing of the host's is in the verdict. (In the container sandbox the
// files of /etc, /usr, /opt, /home, /root and /var are its image's, not the host's: there it counts only the
// repository's folder, which the container does not mount.)
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

static const char* REPO_PARENT = "KERNELJUDGE_REPO_PARENT";

// Prints the first bytes of a file, or the names in a folder; true if there was anything to show.
static bool show(const char* path) {
    if (DIR* folder = opendir(path)) {
        int shown = 0;
        std::fprintf(stderr, "%s:", path);
        while (dirent* entry = readdir(folder))
            if (entry->d_name[0] != '.') std::fprintf(stderr, " %s", entry->d_name), ++shown;
        std::fprintf(stderr, "\n");
        closedir(folder);
        return shown > 0;
    }
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    char text[200];
    ssize_t n = read(fd, text, sizeof text - 1);
    close(fd);
    if (n <= 0) return false;
    text[n] = 0;
    std::fprintf(stderr, "%s: %s\n", path, text);
    return true;
}

void solve(const float*, float*, int, int) {
    const char* paths[] = {REPO_PARENT,    "/etc/passwd", "/etc/hostname", "/etc/os-release", "/usr/share/common-licenses",
                           "/opt",         "/home",       "/root",         "/var/log"};
    const size_t looked = access("/.dockerenv", F_OK) == 0 ? 1 : sizeof paths / sizeof *paths;
    int shown = 0;
    for (size_t i = 0; i < looked; ++i) shown += show(paths[i]);
    std::fprintf(stderr, "host files shown: %d of %zu\n", shown, looked);
    std::abort();
}
