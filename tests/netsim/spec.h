/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The text netsim is configured with: link specs ("rate=10mbit,delay=25ms,
 * queue=100p,loss=0.01", see netsim.c) and schedule files. */
#ifndef NETSIM_SPEC_H
#define NETSIM_SPEC_H

#include "link.h"

typedef struct {
  double at;
  int link;                     /* -1 = all */
  int dir;                      /* 1 ab, 2 ba, 3 both */
  double blackout;              /* seconds, 0 = a parameter change */
  char spec[256];
  int done;
} ScheduleEntry;

/* Prints "netsim: ..." and exits with status 2 (atexit handlers run). */
void die (const char *fmt, ...)
    __attribute__ ((noreturn, format (printf, 1, 2)));

/* Applies "key=value,..." on top of @p; dies on a bad one. */
void spec_parse_link (const char *spec, LinkParams * p);
/* The '/' between the A->B and B->A specs of a --link, or NULL. */
const char *spec_find_direction_split (const char *arg);
/* The entries of a schedule file; dies on a bad one. */
ScheduleEntry *spec_load_schedule (const char *path, int *n_entries);

#endif
