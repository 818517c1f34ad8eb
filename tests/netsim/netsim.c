/* netsim: real kernel TCP between two network namespaces, across links
 * emulated in user space (this kernel has no netem).
 *
 *   netsim [options] -- command [args...]
 *
 * Creates namespaces A and B joined by one TUN device per link on each
 * side, forwards IP packets between them through link models (link.c),
 * runs the command (in the root namespace, with NETSIM_NS_A/B and
 * NETSIM_ADDR_A/B<k> set; it enters the namespaces with `ip netns exec`),
 * and when it ends, prints per-link counters as JSON and removes
 * everything, also on Ctrl-C, SIGTERM or the command crashing.
 *
 * Options:
 *   --link SPEC[/SPEC]   a link (repeatable); SPEC for A->B, the second for
 *                        B->A (default: the same). SPEC is comma-separated
 *                        rate=10mbit delay=25ms queue=100p|64kb loss=0.01
 *                        ge=p_gb:p_bg:loss_good:loss_bad trace=FILE
 *   --schedule FILE      lines "at=SEC [link=K] [dir=ab|ba|both] KEY=VALUE..."
 *                        or "at=SEC [link=K] blackout=SEC"
 *   --cc NAME            TCP congestion control in both namespaces
 *   --ns PREFIX          namespace names PREFIX-a, PREFIX-b (default netsim<pid>)
 *   --seed N             random seed for loss (default 1)
 *   --stats FILE         write the JSON there instead of stderr
 */
#define _GNU_SOURCE
#include "link.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_LINKS 8
#define MAX_EVENTS 256

typedef struct {
  LinkParams ab, ba;
  char *trace_ab, *trace_ba;
  Link link_ab, link_ba;
  int fd_a, fd_b;               /* TUN fds in namespace A and B */
  char dev_a[IFNAMSIZ], dev_b[IFNAMSIZ];
  char addr_a[32], addr_b[32];
  uint64_t write_errors;
} NetLink;

typedef struct {
  double at;
  int link;                     /* -1 = all */
  int dir;                      /* 1 ab, 2 ba, 3 both */
  double blackout;              /* seconds, 0 = a parameter change */
  char spec[256];
  int done;
} ScheduleEntry;

static NetLink links[MAX_LINKS];
static int n_links;
static ScheduleEntry *schedule;
static int n_schedule;
static char ns_a[64], ns_b[64];
static int namespaces_made;
static char *old_allowed_cc;
static pid_t child_pid = -1;
static const char *stats_path;

static void
die (const char *fmt, ...)
{
  va_list ap;
  va_start (ap, fmt);
  fprintf (stderr, "netsim: ");
  vfprintf (stderr, fmt, ap);
  fprintf (stderr, "\n");
  va_end (ap);
  exit (2);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int
run (const char *fmt, ...)
{
  char cmd[1024];
  va_list ap;
  int rc;

  va_start (ap, fmt);
  vsnprintf (cmd, sizeof (cmd), fmt, ap);
  va_end (ap);
  rc = system (cmd);
  return WIFEXITED (rc) ? WEXITSTATUS (rc) : -1;
}

static char *
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
  while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
    buf[--n] = 0;
  return strdup (buf);
}

/* ---- parsing ---- */

static uint64_t
parse_rate (const char *v)
{
  char *end;
  double x = strtod (v, &end);
  if (!strcasecmp (end, "gbit"))
    x *= 1e9;
  else if (!strcasecmp (end, "mbit"))
    x *= 1e6;
  else if (!strcasecmp (end, "kbit"))
    x *= 1e3;
  else if (*end && strcasecmp (end, "bit"))
    die ("bad rate '%s' (use e.g. 10mbit, 500kbit)", v);
  return (uint64_t) x;
}

static uint64_t
parse_time_ns (const char *v)
{
  char *end;
  double x = strtod (v, &end);
  if (!strcmp (end, "ms"))
    return (uint64_t) (x * 1e6);
  if (!strcmp (end, "us"))
    return (uint64_t) (x * 1e3);
  if (!strcmp (end, "s") || !*end)
    return (uint64_t) (x * 1e9);
  die ("bad time '%s' (use e.g. 25ms)", v);
  return 0;
}

static uint64_t *
load_trace (const char *path, size_t *len)
{
  FILE *f = fopen (path, "r");
  uint64_t *v = NULL;
  size_t n = 0, cap = 0;
  char line[64];

  if (!f)
    die ("cannot open trace %s: %s", path, strerror (errno));
  while (fgets (line, sizeof (line), f)) {
    char *end;
    unsigned long long ms = strtoull (line, &end, 10);
    if (end == line)
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 1024;
      v = realloc (v, cap * sizeof (*v));
    }
    v[n++] = ms;
  }
  fclose (f);
  if (n == 0)
    die ("trace %s has no delivery opportunities", path);
  *len = n;
  return v;
}

/* Applies "k=v,k=v" on top of @p. */
static void
parse_spec (const char *spec, LinkParams * p)
{
  char *copy = strdup (spec), *tok, *save = NULL;

  for (tok = strtok_r (copy, ", ", &save); tok;
      tok = strtok_r (NULL, ", ", &save)) {
    char *eq = strchr (tok, '=');
    char *key = tok, *val;
    if (!eq)
      die ("bad link parameter '%s'", tok);
    *eq = 0;
    val = eq + 1;
    if (!strcmp (key, "rate"))
      p->rate_bps = parse_rate (val);
    else if (!strcmp (key, "delay"))
      p->delay_ns = parse_time_ns (val);
    else if (!strcmp (key, "loss"))
      p->loss = atof (val);
    else if (!strcmp (key, "queue")) {
      size_t l = strlen (val);
      if (l > 1 && val[l - 1] == 'p')
        p->queue_packets = atoi (val);
      else if (l > 2 && !strcasecmp (val + l - 2, "kb"))
        p->queue_bytes = (uint64_t) atof (val) * 1000;
      else if (l > 1 && (val[l - 1] == 'b' || val[l - 1] == 'B'))
        p->queue_bytes = (uint64_t) atof (val);
      else
        die ("bad queue '%s' (use 100p, 64kb or 65536b)", val);
    } else if (!strcmp (key, "ge")) {
      if (sscanf (val, "%lf:%lf:%lf:%lf", &p->ge_p_gb, &p->ge_p_bg,
              &p->ge_loss_good, &p->ge_loss_bad) != 4)
        die ("bad ge '%s' (p_gb:p_bg:loss_good:loss_bad)", val);
    } else if (!strcmp (key, "trace")) {
      p->trace_ms = load_trace (val, &p->trace_len);
    } else {
      die ("unknown link parameter '%s'", key);
    }
  }
  free (copy);
}

static void
add_link (const char *arg)
{
  NetLink *l;
  const char *slash = strchr (arg, '/');
  char *fwd;

  if (n_links == MAX_LINKS)
    die ("at most %d links", MAX_LINKS);
  l = &links[n_links++];
  memset (l, 0, sizeof (*l));
  fwd = slash ? strndup (arg, slash - arg) : strdup (arg);
  parse_spec (fwd, &l->ab);
  if (slash)
    parse_spec (slash + 1, &l->ba);
  else
    l->ba = l->ab;
  free (fwd);
}

static void
load_schedule (const char *path)
{
  FILE *f = fopen (path, "r");
  char line[512];

  if (!f)
    die ("cannot open schedule %s: %s", path, strerror (errno));
  while (fgets (line, sizeof (line), f)) {
    ScheduleEntry e = { 0 };
    char *tok, *save = NULL;
    size_t used = 0;

    if (line[0] == '#' || line[0] == '\n')
      continue;
    e.link = -1;
    e.dir = 3;
    e.at = -1;
    for (tok = strtok_r (line, " \t\n", &save); tok;
        tok = strtok_r (NULL, " \t\n", &save)) {
      if (!strncmp (tok, "at=", 3))
        e.at = atof (tok + 3);
      else if (!strncmp (tok, "link=", 5))
        e.link = atoi (tok + 5);
      else if (!strcmp (tok, "dir=ab"))
        e.dir = 1;
      else if (!strcmp (tok, "dir=ba"))
        e.dir = 2;
      else if (!strcmp (tok, "dir=both"))
        e.dir = 3;
      else if (!strncmp (tok, "blackout=", 9))
        e.blackout = atof (tok + 9);
      else
        used += snprintf (e.spec + used, sizeof (e.spec) - used, "%s%s",
            used ? "," : "", tok);
    }
    if (e.at < 0)
      die ("schedule line without at=: %s", line);
    schedule = realloc (schedule, (n_schedule + 1) * sizeof (*schedule));
    schedule[n_schedule++] = e;
  }
  fclose (f);
}

/* ---- namespaces and devices ---- */

typedef struct {
  const char *ns;
  const char *name;
  int fd;
  int err;
} TunRequest;

/* setns () changes the calling thread only: make the device from a thread */
static void *
open_tun_in_namespace (void *data)
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
  snprintf (ifr.ifr_name, IFNAMSIZ, "%s", req->name);
  if (ioctl (fd, TUNSETIFF, &ifr) != 0) {
    req->err = errno;
    close (fd);
    return NULL;
  }
  req->fd = fd;
  return NULL;
}

static int
make_tun (const char *ns, const char *name)
{
  TunRequest req = { ns, name, -1, 0 };
  pthread_t t;

  pthread_create (&t, NULL, open_tun_in_namespace, &req);
  pthread_join (t, NULL);
  if (req.fd < 0)
    die ("cannot create TUN %s in %s: %s", name, ns, strerror (req.err));
  return req.fd;
}

static uint64_t
tx_dropped (const char *ns, const char *dev)
{
  char *s = read_command ("ip netns exec %s cat /sys/class/net/%s/statistics/"
      "tx_dropped 2>/dev/null", ns, dev);
  uint64_t v = strtoull (s, NULL, 10);
  free (s);
  return v;
}

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
  for (i = 0; i < n_links; i++) {
    if (links[i].fd_a > 0)
      close (links[i].fd_a);
    if (links[i].fd_b > 0)
      close (links[i].fd_b);
    links[i].fd_a = links[i].fd_b = 0;
  }
  if (namespaces_made) {
    /* whatever still runs inside goes too */
    run ("ip netns pids %s 2>/dev/null | xargs -r kill -9 2>/dev/null", ns_a);
    run ("ip netns pids %s 2>/dev/null | xargs -r kill -9 2>/dev/null", ns_b);
    run ("ip netns del %s 2>/dev/null", ns_a);
    run ("ip netns del %s 2>/dev/null", ns_b);
    namespaces_made = 0;
  }
  if (old_allowed_cc) {
    FILE *f = fopen ("/proc/sys/net/ipv4/tcp_allowed_congestion_control", "w");
    if (f) {
      fputs (old_allowed_cc, f);
      fclose (f);
    }
    free (old_allowed_cc);
    old_allowed_cc = NULL;
  }
}

static void
on_fatal_signal (int sig)
{
  cleanup ();
  signal (sig, SIG_DFL);
  raise (sig);
}

static void
set_congestion_control (const char *cc)
{
  char *allowed = read_command ("cat /proc/sys/net/ipv4/"
      "tcp_allowed_congestion_control");
  char *got_a, *got_b;

  /* a namespace may only pick what the root namespace allows */
  if (!strstr (allowed, cc)) {
    FILE *f = fopen ("/proc/sys/net/ipv4/tcp_allowed_congestion_control", "w");
    old_allowed_cc = strdup (allowed);
    if (!f || fprintf (f, "%s %s", allowed, cc) < 0 || fclose (f) != 0)
      die ("cannot allow congestion control %s", cc);
  }
  free (allowed);
  if (run ("ip netns exec %s sysctl -qw net.ipv4.tcp_congestion_control=%s",
          ns_a, cc) || run ("ip netns exec %s sysctl -qw "
          "net.ipv4.tcp_congestion_control=%s", ns_b, cc))
    die ("cannot set congestion control %s", cc);
  got_a = read_command ("ip netns exec %s sysctl -n "
      "net.ipv4.tcp_congestion_control", ns_a);
  got_b = read_command ("ip netns exec %s sysctl -n "
      "net.ipv4.tcp_congestion_control", ns_b);
  if (strcmp (got_a, cc) || strcmp (got_b, cc))
    die ("asked for %s, namespaces use %s and %s", cc, got_a, got_b);
  free (got_a);
  free (got_b);
}

static void
setup (const char *cc, uint64_t seed)
{
  int i;
  uint64_t t0 = now_ns ();

  if (run ("ip netns add %s", ns_a) || run ("ip netns add %s", ns_b))
    die ("cannot create network namespaces (root and iproute2 needed)");
  namespaces_made = 1;
  run ("ip -n %s link set lo up", ns_a);
  run ("ip -n %s link set lo up", ns_b);

  for (i = 0; i < n_links; i++) {
    NetLink *l = &links[i];
    snprintf (l->dev_a, IFNAMSIZ, "nsa%d", i);
    snprintf (l->dev_b, IFNAMSIZ, "nsb%d", i);
    snprintf (l->addr_a, sizeof (l->addr_a), "10.77.%d.1", i + 1);
    snprintf (l->addr_b, sizeof (l->addr_b), "10.77.%d.2", i + 1);
    l->fd_a = make_tun (ns_a, l->dev_a);
    l->fd_b = make_tun (ns_b, l->dev_b);
    /* a deep device ring: the default 500 drops silently at high rates */
    if (run ("ip -n %s link set %s up mtu %d txqueuelen 10000", ns_a,
            l->dev_a, LINK_MTU) ||
        run ("ip -n %s link set %s up mtu %d txqueuelen 10000", ns_b,
            l->dev_b, LINK_MTU) ||
        run ("ip -n %s addr add %s peer %s dev %s", ns_a, l->addr_a,
            l->addr_b, l->dev_a) ||
        run ("ip -n %s addr add %s peer %s dev %s", ns_b, l->addr_b,
            l->addr_a, l->dev_b))
      die ("cannot configure link %d", i);
    link_init (&l->link_ab, &l->ab, seed * 2 + i * 16 + 1, t0);
    link_init (&l->link_ba, &l->ba, seed * 2 + i * 16 + 2, t0);
  }
  if (cc)
    set_congestion_control (cc);
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
        continue;
      }
      if (e->dir & 1) {
        LinkParams p = l->link_ab.p;
        parse_spec (e->spec, &p);
        link_update (&l->link_ab, &p);
      }
      if (e->dir & 2) {
        LinkParams p = l->link_ba.p;
        parse_spec (e->spec, &p);
        link_update (&l->link_ba, &p);
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
  fprintf (f, "\"%s\": {\"offered_packets\": %llu, \"forwarded_packets\": "
      "%llu, \"forwarded_bytes\": %llu, \"dropped_loss\": %llu, "
      "\"dropped_queue\": %llu, \"dropped_blackout\": %llu, "
      "\"mean_queue_delay_ms\": %.3f, \"max_queue_delay_ms\": %.3f}", name,
      (unsigned long long) s->offered_packets,
      (unsigned long long) s->forwarded_packets,
      (unsigned long long) s->forwarded_bytes,
      (unsigned long long) s->dropped_loss,
      (unsigned long long) s->dropped_queue,
      (unsigned long long) s->dropped_blackout,
      s->forwarded_packets ? s->queue_delay_sum_ns / 1e6 /
      s->forwarded_packets : 0.0, s->queue_delay_max_ns / 1e6);
}

static void
print_stats (int child_status, const char *cc)
{
  FILE *f = stats_path ? fopen (stats_path, "w") : stderr;
  uint64_t ring_drops = 0;
  int i;

  if (!f)
    f = stderr;
  fprintf (f, "{\"namespaces\": [\"%s\", \"%s\"], \"congestion_control\": "
      "\"%s\", \"exit_status\": %d, \"links\": [", ns_a, ns_b, cc, child_status);
  for (i = 0; i < n_links; i++) {
    NetLink *l = &links[i];
    uint64_t da = tx_dropped (ns_a, l->dev_a), db = tx_dropped (ns_b,
        l->dev_b);
    ring_drops += da + db;
    fprintf (f, "%s{\"id\": %d, \"a\": \"%s\", \"b\": \"%s\", ", i ? ", " : "",
        i, l->addr_a, l->addr_b);
    print_direction (f, "ab", &l->link_ab);
    fprintf (f, ", ");
    print_direction (f, "ba", &l->link_ba);
    fprintf (f, ", \"tun_tx_dropped\": %llu, \"write_errors\": %llu}",
        (unsigned long long) (da + db), (unsigned long long) l->write_errors);
  }
  fprintf (f, "], \"valid\": %s}\n", ring_drops ? "false" : "true");
  if (ring_drops)
    fprintf (stderr, "netsim: INVALID RUN: %llu packets dropped by TUN device "
        "rings, not by the emulated links\n", (unsigned long long) ring_drops);
  if (f != stderr)
    fclose (f);
}

int
main (int argc, char **argv)
{
  const char *cc = NULL, *prefix = NULL;
  uint64_t seed = 1, t0;
  int i, cmd_index = -1, epfd, tfd, sfd, child_status = -1;
  sigset_t mask;
  char *cc_used;

  for (i = 1; i < argc; i++) {
    if (!strcmp (argv[i], "--")) {
      cmd_index = i + 1;
      break;
    } else if (!strcmp (argv[i], "--link") && i + 1 < argc) {
      add_link (argv[++i]);
    } else if (!strcmp (argv[i], "--schedule") && i + 1 < argc) {
      load_schedule (argv[++i]);
    } else if (!strcmp (argv[i], "--cc") && i + 1 < argc) {
      cc = argv[++i];
    } else if (!strcmp (argv[i], "--ns") && i + 1 < argc) {
      prefix = argv[++i];
    } else if (!strcmp (argv[i], "--seed") && i + 1 < argc) {
      seed = strtoull (argv[++i], NULL, 10);
    } else if (!strcmp (argv[i], "--stats") && i + 1 < argc) {
      stats_path = argv[++i];
    } else {
      die ("unknown argument '%s' (see the comment at the top of netsim.c)",
          argv[i]);
    }
  }
  if (cmd_index < 0 || cmd_index >= argc)
    die ("usage: netsim --link SPEC [...] -- command [args]");
  if (n_links == 0)
    add_link ("rate=0");
  if (geteuid () != 0)
    die ("must run as root (network namespaces and TUN devices)");

  snprintf (ns_a, sizeof (ns_a), "%s-a", prefix ? prefix : "netsim");
  snprintf (ns_b, sizeof (ns_b), "%s-b", prefix ? prefix : "netsim");
  if (!prefix) {
    snprintf (ns_a, sizeof (ns_a), "netsim%d-a", (int) getpid ());
    snprintf (ns_b, sizeof (ns_b), "netsim%d-b", (int) getpid ());
  }

  /* whatever happens from here, the namespaces go away */
  atexit (cleanup);
  signal (SIGSEGV, on_fatal_signal);
  signal (SIGABRT, on_fatal_signal);
  signal (SIGBUS, on_fatal_signal);
  sigemptyset (&mask);
  sigaddset (&mask, SIGINT);
  sigaddset (&mask, SIGTERM);
  sigaddset (&mask, SIGHUP);
  sigaddset (&mask, SIGCHLD);
  sigprocmask (SIG_BLOCK, &mask, NULL);
  sfd = signalfd (-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);

  setup (cc, seed);
  cc_used = read_command ("ip netns exec %s sysctl -n "
      "net.ipv4.tcp_congestion_control", ns_a);
  fprintf (stderr, "netsim: namespaces %s and %s, %d link(s), TCP congestion "
      "control %s\n", ns_a, ns_b, n_links, cc_used);

  child_pid = fork ();
  if (child_pid == 0) {
    char name[64];
    setpgid (0, 0);
    prctl (PR_SET_PDEATHSIG, SIGTERM);
    sigprocmask (SIG_UNBLOCK, &mask, NULL);
    setenv ("NETSIM_NS_A", ns_a, 1);
    setenv ("NETSIM_NS_B", ns_b, 1);
    setenv ("NETSIM_CC", cc_used, 1);
    for (i = 0; i < n_links; i++) {
      snprintf (name, sizeof (name), "NETSIM_ADDR_A%d", i);
      setenv (name, links[i].addr_a, 1);
      snprintf (name, sizeof (name), "NETSIM_ADDR_B%d", i);
      setenv (name, links[i].addr_b, 1);
    }
    setenv ("NETSIM_ADDR_A", links[0].addr_a, 1);
    setenv ("NETSIM_ADDR_B", links[0].addr_b, 1);
    execvp (argv[cmd_index], argv + cmd_index);
    fprintf (stderr, "netsim: cannot run %s: %s\n", argv[cmd_index],
        strerror (errno));
    _exit (127);
  }
  setpgid (child_pid, child_pid);

  epfd = epoll_create1 (EPOLL_CLOEXEC);
  tfd = timerfd_create (CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
  {
    struct epoll_event ev = { 0 };
    ev.events = EPOLLIN;
    ev.data.u32 = 1000;
    epoll_ctl (epfd, EPOLL_CTL_ADD, tfd, &ev);
    ev.data.u32 = 1001;
    epoll_ctl (epfd, EPOLL_CTL_ADD, sfd, &ev);
    for (i = 0; i < n_links; i++) {
      ev.data.u32 = i * 2;
      epoll_ctl (epfd, EPOLL_CTL_ADD, links[i].fd_a, &ev);
      ev.data.u32 = i * 2 + 1;
      epoll_ctl (epfd, EPOLL_CTL_ADD, links[i].fd_b, &ev);
    }
  }

  /* wake on time: the default 50 us slack shows up in every RTT */
  prctl (PR_SET_TIMERSLACK, 1UL);
  t0 = now_ns ();
  for (;;) {
    struct epoll_event evs[MAX_EVENTS];
    int n = epoll_wait (epfd, evs, MAX_EVENTS, -1), e;
    uint64_t now = now_ns (), wake;
    int finished = 0;

    for (e = 0; e < n; e++) {
      uint32_t id = evs[e].data.u32;
      if (id == 1000) {
        uint64_t expirations;
        if (read (tfd, &expirations, sizeof (expirations)) < 0)
          continue;
      } else if (id == 1001) {
        struct signalfd_siginfo si;
        while (read (sfd, &si, sizeof (si)) == sizeof (si)) {
          if (si.ssi_signo == SIGCHLD) {
            int st;
            if (waitpid (child_pid, &st, WNOHANG) == child_pid) {
              child_status = WIFEXITED (st) ? WEXITSTATUS (st) :
                  128 + WTERMSIG (st);
              child_pid = -1;
              finished = 1;
            }
          } else {
            fprintf (stderr, "netsim: signal %d, stopping\n", si.ssi_signo);
            child_status = 128 + si.ssi_signo;
            finished = 1;
          }
        }
      } else if (id % 2 == 0) {
        drain_tun (links[id / 2].fd_a, &links[id / 2].link_ab, now);
      } else {
        drain_tun (links[id / 2].fd_b, &links[id / 2].link_ba, now);
      }
    }
    if (finished)
      break;
    now = now_ns ();
    apply_schedule (t0, now);
    for (i = 0; i < n_links; i++) {
      deliver (&links[i].link_ab, links[i].fd_b, now, &links[i].write_errors);
      deliver (&links[i].link_ba, links[i].fd_a, now, &links[i].write_errors);
    }
    wake = next_wakeup (t0);
    {
      struct itimerspec its = { 0 };
      if (wake != UINT64_MAX) {
        its.it_value.tv_sec = wake / 1000000000ull;
        its.it_value.tv_nsec = wake % 1000000000ull;
        if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
          its.it_value.tv_nsec = 1;
      }
      timerfd_settime (tfd, TFD_TIMER_ABSTIME, &its, NULL);
    }
  }

  print_stats (child_status, cc_used);
  free (cc_used);
  cleanup ();
  for (i = 0; i < n_links; i++) {
    link_clear (&links[i].link_ab);
    link_clear (&links[i].link_ba);
  }
  return child_status < 0 ? 1 : child_status;
}
