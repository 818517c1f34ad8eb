/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#define _GNU_SOURCE
#include "spec.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void
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
void
spec_parse_link (const char *spec, LinkParams * p)
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
    if (!strcmp (key, "rate")) {
      p->rate_bps = parse_rate (val);
      p->trace_ms = NULL;
      p->trace_len = 0;
    }
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
    } else if (!strcmp (key, "nat")) {
      p->nat = atoi (val) != 0;
    } else {
      die ("unknown link parameter '%s'", key);
    }
  }
  free (copy);
}

/* The '/' between the A->B and B->A specs is the one followed by "key=",
 * so that trace file paths may hold slashes. */
const char *
spec_find_direction_split (const char *arg)
{
  const char *s;

  for (s = strchr (arg, '/'); s; s = strchr (s + 1, '/')) {
    size_t key = strspn (s + 1, "abcdefghijklmnopqrstuvwxyz_");
    if (key > 0 && s[1 + key] == '=')
      return s;
  }
  return NULL;
}

ScheduleEntry *
spec_load_schedule (const char *path, int *n_entries)
{
  ScheduleEntry *schedule = NULL;
  int n_schedule = 0;
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
    if (!e.spec[0] && e.blackout <= 0)
      die ("schedule line at=%g changes nothing", e.at);
    if (e.spec[0]) {
      /* a bad key must stop netsim now, not in the middle of a run */
      LinkParams scratch = { 0 };
      spec_parse_link (e.spec, &scratch);
      free (scratch.trace_ms);
    }
    schedule = realloc (schedule, (n_schedule + 1) * sizeof (*schedule));
    schedule[n_schedule++] = e;
  }
  fclose (f);
  *n_entries = n_schedule;
  return schedule;
}
