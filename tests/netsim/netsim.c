/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* netsim: real kernel TCP between two network namespaces, across links
 * emulated in user space (this kernel has no netem).
 *
 *   netsim [options] -- command [args...]   runs the command, then ends
 *   netsim [options]                        prints "ready {...}" on stdout
 *                                           and runs until SIGINT/SIGTERM
 *
 * Creates (or joins) namespaces A and B joined by one TUN device per link
 * on each side, forwards IP packets between them through link models
 * (link.c), runs the command (in the root namespace, with NETSIM_NS_A/B and
 * NETSIM_ADDR_A/B<k> set; it enters the namespaces with `ip netns exec`),
 * and when it ends, prints per-link counters as JSON and removes what it
 * made, also on Ctrl-C, SIGTERM, the command crashing, or netsim being
 * killed (a reaper process does it then).
 *
 * Options:
 *   --link SPEC[/SPEC]   a link (repeatable); SPEC for A->B, the second for
 *                        B->A (default: the same). SPEC is comma-separated
 *                        rate=10mbit delay=25ms queue=100p|64kb loss=0.01
 *                        ge=p_gb:p_bg:loss_good:loss_bad trace=FILE
 *                        (rate= after trace= replaces the trace)
 *                        nat=1 (no new TCP connection in this direction:
 *                        only the far end dials, as behind NAT)
 *   --schedule FILE      lines "at=SEC [link=K] [dir=ab|ba|both] KEY=VALUE..."
 *                        or "at=SEC [link=K] [dir=..] blackout=SEC"
 *   --cc NAME            TCP congestion control in both namespaces
 *   --ns PREFIX          namespace names PREFIX-a, PREFIX-b
 *                        (default netsim<pid>-a/-b)
 *   --ns-a NAME, --ns-b NAME   namespace names; existing ones are joined
 *                        (and left in place), missing ones are made
 *   --subnet N           link k uses 10.77.(N+k).1/.2, devices nsa/nsb(N+k-1)
 *                        (default 1; for several netsims in joined namespaces)
 *   --txqueuelen N       TUN device ring length (default 10000)
 *   --seed N             random seed for loss (default 1)
 *   --stats FILE         write the JSON there instead of stderr; SIGUSR1
 *                        appends a line to FILE.marks: the time and the
 *                        bytes each link forwarded (ab, ba) and was
 *                        offered (ab_offered, ba_offered: lost ones too)
 *                        so far (a benchmark takes its steady-state span
 *                        between two marks)
 */
#define _GNU_SOURCE
#include "link.h"
#include "netns.h"
#include "spec.h"

#include <errno.h>
#include <linux/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 8
#define MAX_EVENTS 256
#define CC_SYSCTL "net.ipv4.tcp_congestion_control"

typedef struct {
  LinkParams ab, ba;
  Link link_ab, link_ba;
  int fd_a, fd_b;               /* TUN fds in namespace A and B, -1 = none */
  char dev_a[IFNAMSIZ], dev_b[IFNAMSIZ];
  char addr_a[32], addr_b[32];
  uint64_t write_errors;
} NetLink;

typedef struct {
  char name[64];
  int created;                  /* made by us: removed at the end */
  int joined;                   /* existed: only our devices go */
  char *cc_before;              /* joined and --cc: set back at the end */
  char *cc;                     /* what its TCP uses */
} Namespace;

static NetLink links[MAX_LINKS];
static int n_links;
static ScheduleEntry *schedule;
static int n_schedule;
static Namespace ns_a, ns_b;
static char *allowed_cc_before, *allowed_cc_ours;
static pid_t child_pid = -1;
static const char *stats_path;
static int txqueuelen = 10000;

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* ---- parsing ---- */

static void
add_link (const char *arg)
{
  NetLink *l;
  const char *slash = spec_find_direction_split (arg);
  char *fwd;

  if (n_links == MAX_LINKS)
    die ("at most %d links", MAX_LINKS);
  l = &links[n_links++];
  memset (l, 0, sizeof (*l));
  l->fd_a = l->fd_b = -1;
  fwd = slash ? strndup (arg, slash - arg) : strdup (arg);
  spec_parse_link (fwd, &l->ab);
  if (slash)
    spec_parse_link (slash + 1, &l->ba);
  else
    l->ba = l->ab;
  free (fwd);
}

/* ---- namespaces and devices ---- */

static void
cleanup (void)
{
  int i;

  if (child_pid > 0) {
    kill (-child_pid, SIGTERM);
    usleep (200000);
    kill (-child_pid, SIGKILL);
    child_pid = -1;
  }
  /* closing a TUN fd removes its (non-persistent) device */
  for (i = 0; i < n_links; i++) {
    if (links[i].fd_a >= 0)
      close (links[i].fd_a);
    if (links[i].fd_b >= 0)
      close (links[i].fd_b);
    links[i].fd_a = links[i].fd_b = -1;
  }
  if (ns_a.created)
    netns_remove (ns_a.name);
  if (ns_b.created)
    netns_remove (ns_b.name);
  ns_a.created = ns_b.created = 0;
  if (ns_a.cc_before)
    run_command ("ip netns exec %s sysctl -qw " CC_SYSCTL "=%s", ns_a.name,
        ns_a.cc_before);
  if (ns_b.cc_before)
    run_command ("ip netns exec %s sysctl -qw " CC_SYSCTL "=%s", ns_b.name,
        ns_b.cc_before);
  free (ns_a.cc_before);
  free (ns_b.cc_before);
  ns_a.cc_before = ns_b.cc_before = NULL;
  if (allowed_cc_before) {
    allowed_cc_restore (allowed_cc_before, allowed_cc_ours);
    free (allowed_cc_before);
    free (allowed_cc_ours);
    allowed_cc_before = allowed_cc_ours = NULL;
  }
  reaper_done ();
}

static void
on_fatal_signal (int sig)
{
  cleanup ();
  signal (sig, SIG_DFL);
  raise (sig);
}

static char *
namespace_cc (Namespace * ns)
{
  return read_command ("ip netns exec %s sysctl -n " CC_SYSCTL, ns->name);
}

static void
set_congestion_control (const char *cc)
{
  char *allowed = read_command ("cat /proc/sys/net/ipv4/"
      "tcp_allowed_congestion_control");
  Namespace *both[2] = { &ns_a, &ns_b };
  int i;

  /* a namespace may only pick what the root namespace allows (root's
   * sockets may set any with TCP_CONGESTION, but their default may not) */
  if (!strstr (allowed, cc)) {
    FILE *f = fopen ("/proc/sys/net/ipv4/tcp_allowed_congestion_control", "w");
    char ours[512];
    snprintf (ours, sizeof (ours), "%s %s", allowed, cc);
    if (!f || fputs (ours, f) < 0 || fclose (f) != 0)
      die ("cannot allow congestion control %s", cc);
    allowed_cc_before = strdup (allowed);
    /* the kernel writes the list back in its own order */
    allowed_cc_ours = read_command ("cat /proc/sys/net/ipv4/"
        "tcp_allowed_congestion_control");
    reaper_restore_allowed_cc_later (allowed_cc_before, allowed_cc_ours);
    fprintf (stderr, "netsim: added %s to tcp_allowed_congestion_control "
        "until netsim ends\n", cc);
  }
  free (allowed);
  for (i = 0; i < 2; i++) {
    char *got;
    if (both[i]->joined)
      both[i]->cc_before = namespace_cc (both[i]);
    if (run_command ("ip netns exec %s sysctl -qw " CC_SYSCTL "=%s",
            both[i]->name, cc))
      die ("cannot set congestion control %s in %s", cc, both[i]->name);
    got = namespace_cc (both[i]);
    if (strcmp (got, cc))
      die ("asked for %s, %s uses %s", cc, both[i]->name, got);
    free (got);
  }
}

static void
setup_namespace (Namespace * ns)
{
  if (netns_create_or_join (ns->name, &ns->created) != 0)
    die ("cannot create network namespace %s (root and iproute2 needed)",
        ns->name);
  ns->joined = !ns->created;
  if (ns->created)
    reaper_remove_netns_later (ns->name);
}

/* when the links (and their traces) started, CLOCK_MONOTONIC ns */
static uint64_t links_t0_ns;

static void
setup (const char *cc, uint64_t seed, int subnet)
{
  int i;
  uint64_t t0 = now_ns ();

  links_t0_ns = t0;
  setup_namespace (&ns_a);
  setup_namespace (&ns_b);
  for (i = 0; i < n_links; i++) {
    NetLink *l = &links[i];
    int net = subnet + i;
    snprintf (l->dev_a, IFNAMSIZ, "nsa%d", net - 1);
    snprintf (l->dev_b, IFNAMSIZ, "nsb%d", net - 1);
    snprintf (l->addr_a, sizeof (l->addr_a), "10.77.%d.1", net);
    snprintf (l->addr_b, sizeof (l->addr_b), "10.77.%d.2", net);
    if ((l->fd_a = netns_open_tun (ns_a.name, l->dev_a)) < 0 ||
        (l->fd_b = netns_open_tun (ns_b.name, l->dev_b)) < 0)
      die ("cannot create TUN device %s/%s: %s", l->dev_a, l->dev_b,
          strerror (errno));
    /* a deep device ring: the default 500 drops silently at high rates */
    if (run_command ("ip -n %s link set %s up mtu %d txqueuelen %d",
            ns_a.name, l->dev_a, LINK_MTU, txqueuelen) ||
        run_command ("ip -n %s link set %s up mtu %d txqueuelen %d",
            ns_b.name, l->dev_b, LINK_MTU, txqueuelen) ||
        run_command ("ip -n %s addr add %s peer %s dev %s", ns_a.name,
            l->addr_a, l->addr_b, l->dev_a) ||
        run_command ("ip -n %s addr add %s peer %s dev %s", ns_b.name,
            l->addr_b, l->addr_a, l->dev_b))
      die ("cannot configure link %d", i);
    link_init (&l->link_ab, &l->ab, seed * 2 + i * 16 + 1, t0);
    link_init (&l->link_ba, &l->ba, seed * 2 + i * 16 + 2, t0);
  }
  if (cc)
    set_congestion_control (cc);
  ns_a.cc = namespace_cc (&ns_a);
  ns_b.cc = namespace_cc (&ns_b);
}

/* ---- forwarding ---- */

static void
drain_tun (int fd, Link * link, uint64_t now)
{
  unsigned char buf[65536];

  for (;;) {
    ssize_t n = read (fd, buf, sizeof (buf));
    if (n <= 0)
      return;
    link_enqueue (link, buf, (size_t) n, now);
  }
}

static void
deliver (Link * link, int fd, uint64_t now, uint64_t * errors)
{
  LinkPacket *p;

  while ((p = link_dequeue (link, now))) {
    if (write (fd, p->data, p->len) != (ssize_t) p->len)
      (*errors)++;
    free (p);
  }
}

static void
apply_schedule (uint64_t t0, uint64_t now)
{
  int i, k;

  for (i = 0; i < n_schedule; i++) {
    ScheduleEntry *e = &schedule[i];
    if (e->done || now < t0 + (uint64_t) (e->at * 1e9))
      continue;
    e->done = 1;
    for (k = 0; k < n_links; k++) {
      NetLink *l = &links[k];
      if (e->link >= 0 && e->link != k)
        continue;
      if (e->blackout > 0) {
        uint64_t until = now + (uint64_t) (e->blackout * 1e9);
        if (e->dir & 1)
          link_blackout (&l->link_ab, until);
        if (e->dir & 2)
          link_blackout (&l->link_ba, until);
        fprintf (stderr, "netsim: t=%.1f s: link %d blackout for %.1f s\n",
            e->at, k, e->blackout);
      }
      if (!e->spec[0])
        continue;
      if (e->dir & 1) {
        LinkParams p = l->link_ab.p;
        spec_parse_link (e->spec, &p);
        link_update (&l->link_ab, &p, now);
      }
      if (e->dir & 2) {
        LinkParams p = l->link_ba.p;
        spec_parse_link (e->spec, &p);
        link_update (&l->link_ba, &p, now);
      }
      fprintf (stderr, "netsim: t=%.1f s: link %d %s\n", e->at, k, e->spec);
    }
  }
}

static uint64_t
next_wakeup (uint64_t t0)
{
  uint64_t t = UINT64_MAX;
  int i;

  for (i = 0; i < n_links; i++) {
    uint64_t a = link_next_delivery (&links[i].link_ab);
    uint64_t b = link_next_delivery (&links[i].link_ba);
    if (a < t)
      t = a;
    if (b < t)
      t = b;
  }
  for (i = 0; i < n_schedule; i++) {
    uint64_t at = t0 + (uint64_t) (schedule[i].at * 1e9);
    if (!schedule[i].done && at < t)
      t = at;
  }
  return t;
}

static void
print_direction (FILE * f, const char *name, Link * link)
{
  LinkStats *s = &link->stats;
  fprintf (f, "\"%s\": {\"offered_packets\": %llu, \"offered_bytes\": %llu, "
      "\"forwarded_packets\": %llu, \"forwarded_bytes\": %llu, "
      "\"dropped_loss\": %llu, "
      "\"dropped_queue\": %llu, \"dropped_blackout\": %llu, "
      "\"dropped_syn\": %llu, \"mean_queue_delay_ms\": %.3f, \"max_queue_delay_ms\": %.3f}", name,
      (unsigned long long) s->offered_packets,
      (unsigned long long) s->offered_bytes,
      (unsigned long long) s->forwarded_packets,
      (unsigned long long) s->forwarded_bytes,
      (unsigned long long) s->dropped_loss,
      (unsigned long long) s->dropped_queue,
      (unsigned long long) s->dropped_blackout,
      (unsigned long long) s->dropped_syn,
      s->forwarded_packets ? s->queue_delay_sum_ns / 1e6 /
      s->forwarded_packets : 0.0, s->queue_delay_max_ns / 1e6);
}

/* one JSON line: CLOCK_MONOTONIC seconds and each link's bytes so far */
static void
append_mark (void)
{
  char path[4096];
  FILE *f;
  int i;

  if (!stats_path)
    return;
  snprintf (path, sizeof (path), "%s.marks", stats_path);
  f = fopen (path, "a");
  if (!f)
    return;
  fprintf (f, "{\"t\": %.6f, \"links\": [", now_ns () / 1e9);
  for (i = 0; i < n_links; i++)
    fprintf (f, "%s{\"ab\": %llu, \"ba\": %llu, \"ab_offered\": %llu, "
        "\"ba_offered\": %llu}", i ? ", " : "",
        (unsigned long long) links[i].link_ab.stats.forwarded_bytes,
        (unsigned long long) links[i].link_ba.stats.forwarded_bytes,
        (unsigned long long) links[i].link_ab.stats.offered_bytes,
        (unsigned long long) links[i].link_ba.stats.offered_bytes);
  fprintf (f, "]}\n");
  fclose (f);
}

static void
print_stats (int child_status)
{
  FILE *f = stats_path ? fopen (stats_path, "w") : stderr;
  uint64_t ring_drops = 0;
  int i;

  if (!f)
    f = stderr;
  fprintf (f, "{\"namespaces\": [\"%s\", \"%s\"], \"congestion_control\": "
      "\"%s\", \"congestion_control_a\": \"%s\", \"congestion_control_b\": "
      "\"%s\", \"exit_status\": %d, \"links_t0\": %.6f, \"links\": [",
      ns_a.name, ns_b.name, ns_a.cc, ns_a.cc, ns_b.cc, child_status,
      links_t0_ns / 1e9);
  for (i = 0; i < n_links; i++) {
    NetLink *l = &links[i];
    uint64_t da = netns_tx_dropped (ns_a.name, l->dev_a);
    uint64_t db = netns_tx_dropped (ns_b.name, l->dev_b);
    ring_drops += da + db;
    fprintf (f, "%s{\"id\": %d, \"a\": \"%s\", \"b\": \"%s\", ", i ? ", " : "",
        i, l->addr_a, l->addr_b);
    print_direction (f, "ab", &l->link_ab);
    fprintf (f, ", ");
    print_direction (f, "ba", &l->link_ba);
    fprintf (f, ", \"tun_tx_dropped\": %llu, \"tun_tx_dropped_a\": %llu, "
        "\"tun_tx_dropped_b\": %llu, \"write_errors\": %llu}",
        (unsigned long long) (da + db), (unsigned long long) da,
        (unsigned long long) db, (unsigned long long) l->write_errors);
  }
  fprintf (f, "], \"valid\": %s}\n", ring_drops ? "false" : "true");
  if (ring_drops)
    fprintf (stderr, "netsim: INVALID RUN: %llu packets dropped by TUN device "
        "rings, not by the emulated links\n", (unsigned long long) ring_drops);
  if (f != stderr)
    fclose (f);
}

static void
print_ready (void)
{
  int i;

  printf ("ready {\"ns_a\": \"%s\", \"ns_b\": \"%s\", \"congestion_control_a\": "
      "\"%s\", \"congestion_control_b\": \"%s\", \"links\": [", ns_a.name,
      ns_b.name, ns_a.cc, ns_b.cc);
  for (i = 0; i < n_links; i++)
    printf ("%s{\"a\": \"%s\", \"b\": \"%s\"}", i ? ", " : "",
        links[i].addr_a, links[i].addr_b);
  printf ("]}\n");
  fflush (stdout);
}

static void
start_command (char **argv, const sigset_t * mask)
{
  int i;
  char name[64];

  child_pid = fork ();
  if (child_pid < 0)
    die ("fork: %s", strerror (errno));
  if (child_pid > 0) {
    setpgid (child_pid, child_pid);
    return;
  }
  /* its own process group, so that all of it can be stopped at the end */
  setpgid (0, 0);
  prctl (PR_SET_PDEATHSIG, SIGTERM);
  sigprocmask (SIG_UNBLOCK, mask, NULL);
  setenv ("NETSIM_NS_A", ns_a.name, 1);
  setenv ("NETSIM_NS_B", ns_b.name, 1);
  setenv ("NETSIM_CC", ns_a.cc, 1);
  setenv ("NETSIM_CC_A", ns_a.cc, 1);
  setenv ("NETSIM_CC_B", ns_b.cc, 1);
  for (i = 0; i < n_links; i++) {
    snprintf (name, sizeof (name), "NETSIM_ADDR_A%d", i);
    setenv (name, links[i].addr_a, 1);
    snprintf (name, sizeof (name), "NETSIM_ADDR_B%d", i);
    setenv (name, links[i].addr_b, 1);
  }
  setenv ("NETSIM_ADDR_A", links[0].addr_a, 1);
  setenv ("NETSIM_ADDR_B", links[0].addr_b, 1);
  execvp (argv[0], argv);
  fprintf (stderr, "netsim: cannot run %s: %s\n", argv[0], strerror (errno));
  _exit (127);
}

static void
watch (int epfd, int fd, uint32_t id)
{
  struct epoll_event ev = { 0 };
  ev.events = EPOLLIN;
  ev.data.u32 = id;
  if (epoll_ctl (epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
    die ("epoll: %s", strerror (errno));
}

/* The event loop: TUN reads, timer for deliveries and the schedule,
 * signals. Returns the command's exit status (or 128 + signal). */
static int
forward_until_done (int sfd)
{
  int epfd, tfd, i, status = -1;
  uint64_t t0;

  epfd = epoll_create1 (EPOLL_CLOEXEC);
  tfd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  if (epfd < 0 || tfd < 0)
    die ("epoll/timerfd: %s", strerror (errno));
  watch (epfd, tfd, 1000);
  watch (epfd, sfd, 1001);
  for (i = 0; i < n_links; i++) {
    watch (epfd, links[i].fd_a, i * 2);
    watch (epfd, links[i].fd_b, i * 2 + 1);
  }
  /* wake on time: the default 50 us slack shows up in every RTT */
  prctl (PR_SET_TIMERSLACK, 1UL);
  t0 = now_ns ();
  for (;;) {
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait (epfd, evs, MAX_EVENTS, -1), e;
    uint64_t now = now_ns (), wake;
    struct itimerspec its = { 0 };

    for (e = 0; e < n; e++) {
      uint32_t id = evs[e].data.u32;
      if (id == 1000) {
        uint64_t expirations;
        if (read (tfd, &expirations, sizeof (expirations)) < 0)
          continue;
      } else if (id == 1001) {
        struct signalfd_siginfo si;
        while (read (sfd, &si, sizeof (si)) == sizeof (si)) {
          int st;
          if (si.ssi_signo == SIGUSR1) {
            append_mark ();
          } else if (si.ssi_signo != SIGCHLD) {
            fprintf (stderr, "netsim: signal %d, stopping\n", si.ssi_signo);
            status = 128 + si.ssi_signo;
          } else if (child_pid > 0 &&
              waitpid (child_pid, &st, WNOHANG) == child_pid) {
            status = WIFEXITED (st) ? WEXITSTATUS (st) : 128 + WTERMSIG (st);
            child_pid = -1;
          }
        }
      } else if (id % 2 == 0) {
        drain_tun (links[id / 2].fd_a, &links[id / 2].link_ab, now);
      } else {
        drain_tun (links[id / 2].fd_b, &links[id / 2].link_ba, now);
      }
    }
    if (status >= 0)
      break;
    now = now_ns ();
    apply_schedule (t0, now);
    for (i = 0; i < n_links; i++) {
      deliver (&links[i].link_ab, links[i].fd_b, now, &links[i].write_errors);
      deliver (&links[i].link_ba, links[i].fd_a, now, &links[i].write_errors);
    }
    wake = next_wakeup (t0);
    if (wake != UINT64_MAX) {
      its.it_value.tv_sec = wake / 1000000000ull;
      its.it_value.tv_nsec = wake % 1000000000ull;
      if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
        its.it_value.tv_nsec = 1;
    }
    timerfd_settime (tfd, TFD_TIMER_ABSTIME, &its, NULL);
  }
  close (tfd);
  close (epfd);
  return status;
}

int
main (int argc, char **argv)
{
  const char *cc = NULL, *prefix = NULL, *name_a = NULL, *name_b = NULL;
  uint64_t seed = 1;
  int i, cmd_index = -1, sfd, status, subnet = 1;
  sigset_t mask;

  for (i = 0; i < MAX_LINKS; i++)
    links[i].fd_a = links[i].fd_b = -1;
  for (i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--")) {
      cmd_index = i + 1;
      break;
    } else if (!strcmp (argv[i], "--link") && i + 1 < argc) {
      add_link (argv[++i]);
    } else if (!strcmp (argv[i], "--schedule") && i + 1 < argc) {
      schedule = spec_load_schedule (argv[++i], &n_schedule);
    } else if (!strcmp (argv[i], "--cc") && i + 1 < argc) {
      cc = argv[++i];
    } else if (!strcmp (argv[i], "--ns") && i + 1 < argc) {
      prefix = argv[++i];
    } else if (!strcmp (argv[i], "--ns-a") && i + 1 < argc) {
      name_a = argv[++i];
    } else if (!strcmp (argv[i], "--ns-b") && i + 1 < argc) {
      name_b = argv[++i];
    } else if (!strcmp (argv[i], "--subnet") && i + 1 < argc) {
      subnet = atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--txqueuelen") && i + 1 < argc) {
      txqueuelen = atoi (argv[++i]);
    } else if (!strcmp (argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull (argv[++i], NULL, 10);
    } else if (!strcmp (argv[i], "--stats") && i + 1 < argc) {
      stats_path = argv[++i];
    } else {
      die ("unknown argument '%s' (see the comment at the top of netsim.c)",
          argv[i]);
    }
  }
  if (cmd_index >= argc)
    die ("usage: netsim --link SPEC [...] [-- command [args]]");
  if (subnet < 1 || subnet + n_links > 255)
    die ("--subnet must leave 10.77.N.0 .. 10.77.(N+links-1).0 within 1..254");
  if (n_links == 0)
    add_link ("rate=0");
  for (i = 0; i < n_schedule; i++)
    if (schedule[i].link >= n_links)
      die ("the schedule names link %d, there are %d", schedule[i].link,
          n_links);
  if (geteuid () != 0)
    die ("must run as root (network namespaces and TUN devices)");

  if (prefix) {
    snprintf (ns_a.name, sizeof (ns_a.name), "%s-a", prefix);
    snprintf (ns_b.name, sizeof (ns_b.name), "%s-b", prefix);
  } else {
    snprintf (ns_a.name, sizeof (ns_a.name), "netsim%d-a", (int) getpid ());
    snprintf (ns_b.name, sizeof (ns_b.name), "netsim%d-b", (int) getpid ());
  }
  if (name_a)
    snprintf (ns_a.name, sizeof (ns_a.name), "%s", name_a);
  if (name_b)
    snprintf (ns_b.name, sizeof (ns_b.name), "%s", name_b);
  if (!strcmp (ns_a.name, ns_b.name))
    die ("namespaces A and B must differ");

  /* whatever happens from here, what we make goes away: atexit and signal
   * handlers for our own ends, the reaper for SIGKILL */
  reaper_start ();
  atexit (cleanup);
  signal (SIGSEGV, on_fatal_signal);
  signal (SIGABRT, on_fatal_signal);
  signal (SIGBUS, on_fatal_signal);
  signal (SIGFPE, on_fatal_signal);
  signal (SIGPIPE, SIG_IGN);
  sigemptyset (&mask);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGCHLD);
  sigaddset (&mask, SIGUSR1);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  setup (cc, seed, subnet);
  fprintf (stderr, "netsim: namespaces %s%s and %s%s, %d link(s), TCP "
      "congestion control %s in A, %s in B\n", ns_a.name,
      ns_a.joined ? " (joined)" : "", ns_b.name,
      ns_b.joined ? " (joined)" : "", n_links, ns_a.cc, ns_b.cc);

  if (cmd_index > 0)
    start_command (argv + cmd_index, &mask);
  else
    print_ready ();
  status = forward_until_done (sfd);

  print_stats (status);
  cleanup ();
  for (i = 0; i < n_links; i++) {
    link_clear (&links[i].link_ab);
    link_clear (&links[i].link_ba);
  }
  /* the command's status; in "ready" mode a SIGINT/SIGTERM is the end */
  if (cmd_index < 0)
    return status == 128 + SIGINT || status == 128 + SIGTERM ? 0 : status;
  return status;
}
