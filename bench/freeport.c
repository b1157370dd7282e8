/*
 * freeport.c — print a TCP port on 127.0.0.1 that is free right now, for
 * bench/run to start redis-server on (the kernel picks it: bind to port 0,
 * read the port back, close).
 */
#include "lib/bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int
main(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        bench_die("freeport: %s", strerror(errno));
    printf("%d\n", ntohs(sa.sin_port));
    close(fd);
    return 0;
}
