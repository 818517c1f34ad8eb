/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include "netns.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOWED_CC_PATH "/proc/sys/net/ipv4/tcp_allowed_congestion_control"

static int reaper_fd = -1;

int
run_command (const char *fmt, ...)
{
  char cmd[1024];
  va_list ap;
  int rc;

  va_start (ap, fmt);
  vsnprintf (cmd, sizeof (cmd), fmt, ap);
  va_end (ap);
  rc = system (cmd);
  return rc != -1 && WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

char *
read_command (const char *fmt, ...)
{
  char cmd[1024], buf[256];
  va_list ap;
  FILE *f;
  size_t n;

  va_start (ap, fmt);
  vsnprintf (cmd, sizeof (cmd), fmt, ap);
  va_end (ap);
  f = popen (cmd, "r");
  if (!f)
    return strdup ("");
  n = fread (buf, 1, sizeof (buf) - 1, f);
  pclose (f);
  buf[n] = 0;
  buf[strcspn (buf, "\n")] = 0;
  while (n > 0 && buf[n - 1] == ' ')
    buf[--n] = 0;
  return strdup (buf);
}

int
netns_exists (const char *name)
{
  char path[128];
  struct stat st;

  snprintf (path, sizeof (path), "/var/run/netns/%s", name);
  return stat (path, &st) == 0;
}

int
netns_create_or_join (const char *name, int *created)
{
  *created = 0;
  if (netns_exists (name))
    return 0;
  if (run_command ("ip netns add %s", name) != 0)
    return -1;
  *created = 1;
  run_command ("ip -n %s link set lo up", name);
  return 0;
}

void
netns_remove (const char *name)
{
  if (!netns_exists (name))
    return;
  /* whatever still runs inside goes too, or the namespace would live on */
  run_command ("ip netns pids %s 2>/dev/null | xargs -r kill -9 2>/dev/null",
      name);
  run_command ("ip netns del %s 2>/dev/null", name);
}

typedef struct {
  const char *ns;
  const char *dev;
  int fd;
  int err;
} TunRequest;

/* setns () moves only the calling thread: open the device from a thread,
 * the fd stays bound to the namespace it was made in */
static void *
open_tun_thread (void *data)
{
  TunRequest *req = data;
  char path[128];
  int nsfd, fd;
  struct ifreq ifr;

  snprintf (path, sizeof (path), "/var/run/netns/%s", req->ns);
  nsfd = open (path, O_RDONLY | O_CLOEXEC);
  if (nsfd < 0 || setns (nsfd, CLONE_NEWNET) != 0) {
    req->err = errno;
    return NULL;
  }
  close (nsfd);
  fd = open ("/dev/net/tun", O_RDWR | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    req->err = errno;
    return NULL;
  }
  memset (&ifr, 0, sizeof (ifr));
  ifr.ifr_flags = IFF_TUN | IFF_NO_PI;
  snprintf (ifr.ifr_name, IFNAMSIZ, "%s", req->dev);
  if (ioctl (fd, TUNSETIFF, &ifr) != 0) {
    req->err = errno;
    close (fd);
    return NULL;
  }
  req->fd = fd;
  return NULL;
}

int
netns_open_tun (const char *ns, const char *dev)
{
  TunRequest req = { ns, dev, -1, 0 };
  pthread_t t;

  if (pthread_create (&t, NULL, open_tun_thread, &req) != 0)
    return -1;
  pthread_join (t, NULL);
  errno = req.err;
  return req.fd;
}

uint64_t
netns_tx_dropped (const char *ns, const char *dev)
{
  /* `ip netns exec` mounts the namespace's own /sys */
  char *s = read_command ("ip netns exec %s cat /sys/class/net/%s/statistics/"
      "tx_dropped 2>/dev/null", ns, dev);
  uint64_t v = strtoull (s, NULL, 10);
  free (s);
  return v;
}

void
allowed_cc_restore (const char *old, const char *ours)
{
  char *now = read_command ("cat " ALLOWED_CC_PATH);
  FILE *f;

  if (!strcmp (now, ours) && (f = fopen (ALLOWED_CC_PATH, "w"))) {
    fputs (old, f);
    fclose (f);
  }
  free (now);
}

/* ---- the reaper ---- */

static void
reaper_main (int fd)
{
  char buf[4096], *line, *save = NULL;
  size_t used = 0;
  ssize_t n;

  /* Ctrl-C goes to netsim's process group; this one must outlive it */
  setsid ();
  signal (SIGINT, SIG_IGN);
  signal (SIGTERM, SIG_IGN);
  signal (SIGHUP, SIG_IGN);
  while (used < sizeof (buf) - 1 &&
      (n = read (fd, buf + used, sizeof (buf) - 1 - used)) != 0) {
    if (n < 0) {
      if (errno == EINTR)
        continue;
      break;
    }
    used += n;
    buf[used] = 0;
    if (strstr (buf, "done\n"))
      _exit (0);
  }
  buf[used] = 0;
  /* netsim ended without cleaning up (killed): undo what it told us */
  for (line = strtok_r (buf, "\n", &save); line;
      line = strtok_r (NULL, "\n", &save)) {
    if (!strncmp (line, "ns ", 3)) {
      netns_remove (line + 3);
      fprintf (stderr, "netsim reaper: removed namespace %s\n", line + 3);
    } else if (!strncmp (line, "cc ", 3)) {
      char *sep = strchr (line, '|');
      if (sep) {
        *sep = 0;
        allowed_cc_restore (line + 3, sep + 1);
      }
    }
  }
  _exit (0);
}

void
reaper_start (void)
{
  int fds[2];
  pid_t pid;

  if (pipe2 (fds, O_CLOEXEC) != 0)
    return;
  fflush (NULL);
  pid = fork ();
  if (pid == 0) {
    close (fds[1]);
    reaper_main (fds[0]);
  }
  close (fds[0]);
  if (pid < 0)
    close (fds[1]);
  else
    reaper_fd = fds[1];
}

static void
reaper_tell (const char *line)
{
  size_t len = strlen (line);
  if (reaper_fd >= 0 && write (reaper_fd, line, len) != (ssize_t) len)
    fprintf (stderr, "netsim: cannot reach the reaper\n");
}

void
reaper_remove_netns_later (const char *name)
{
  char line[160];
  snprintf (line, sizeof (line), "ns %s\n", name);
  reaper_tell (line);
}

void
reaper_restore_allowed_cc_later (const char *old, const char *ours)
{
  char line[600];
  snprintf (line, sizeof (line), "cc %s|%s\n", old, ours);
  reaper_tell (line);
}

void
reaper_done (void)
{
  reaper_tell ("done\n");
  if (reaper_fd >= 0)
    close (reaper_fd);
  reaper_fd = -1;
}
