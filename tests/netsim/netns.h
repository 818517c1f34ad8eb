/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Network namespaces, the TUN devices in them, and a reaper process that
 * removes what netsim made even when netsim itself is killed (SIGKILL). */
#ifndef NETSIM_NETNS_H
#define NETSIM_NETNS_H

#include <stddef.h>
#include <stdint.h>

/* system () of a formatted command; its exit status, -1 if it died */
int run_command (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));
/* The first line a formatted command prints, trimmed; never NULL. */
char *read_command (const char *fmt, ...)
    __attribute__ ((format (printf, 1, 2)));

int netns_exists (const char *name);
/* Creates @name, or joins it if it exists (*created tells which).
 * Returns 0, or -1 when it can be neither. */
int netns_create_or_join (const char *name, int *created);
/* Kills every process inside, then deletes the namespace. */
void netns_remove (const char *name);
/* A TUN device @dev in namespace @ns (non-blocking fd), -1 and errno. */
int netns_open_tun (const char *ns, const char *dev);
/* The device's TX-dropped counter (its ring overflowed). */
uint64_t netns_tx_dropped (const char *ns, const char *dev);

/* tcp_allowed_congestion_control is global (the root namespace's): set
 * it back to @old unless someone changed it again after we wrote @ours. */
void allowed_cc_restore (const char *old, const char *ours);

/* The reaper is a child in its own session that waits for netsim to end.
 * netsim tells it what to undo; if netsim ends without reaper_done (), as
 * on SIGKILL, the reaper undoes it. */
void reaper_start (void);
void reaper_remove_netns_later (const char *name);
/* Restore tcp_allowed_congestion_control to @old, if it still is @ours. */
void reaper_restore_allowed_cc_later (const char *old, const char *ours);
void reaper_done (void);

#endif
