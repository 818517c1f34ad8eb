/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink's repair budget, one per session: copies of frames stuck on a
 * connection (hedges when the receiver waits for one, copies ahead of a
 * deadline) are paid from what the stream earns, a percentage of its
 * bytes, and only from spare capacity. While the session's connections
 * together carry no more than the stream needs (capacity-limited), or none
 * of those with data in flight has heard an ACK for a while (the path is
 * dark), a copy would take the place of a frame or go into a dead path:
 * then there is no repair at all.
 *
 * No locking inside: the owner (MtcpServer) serialises calls. */
#ifndef __MTCP_REPAIR_H__
#define __MTCP_REPAIR_H__

#include <glib.h>

G_BEGIN_DECLS

typedef struct _MtcpRepairBudget MtcpRepairBudget;

typedef enum {
  MTCP_REPAIR_OPEN,             /* spare capacity: copies as the credit allows */
  MTCP_REPAIR_CAPACITY_LIMITED, /* the windows carry no more than the stream */
  MTCP_REPAIR_DARK,             /* data in flight and no ACK on any connection */
  MTCP_REPAIR_OFF,              /* copy-overhead 0 */
} MtcpRepairGate;

/* What the path looks like, from the session's connections' TCP_INFO. */
typedef struct {
  guint64 capacity_bps;         /* sum of cwnd x MSS / RTT (bits/s) */
  guint64 stream_bps;           /* what the stream needs */
  gboolean dark;                /* no ACK for long on every busy connection */
} MtcpRepairPath;

/* The stream's capacity must exceed its rate by this share before a copy
 * is spare: windows are estimates, and a copy on a full path delays a
 * frame */
#define MTCP_REPAIR_SPARE_MARGIN 0.2

MtcpRepairBudget *mtcp_repair_budget_new (guint overhead_percent);
void mtcp_repair_budget_free (MtcpRepairBudget * budget);

/* @bytes of the stream were handed out, at @stream_bitrate (bits/s, 0 =
 * unknown): the credit grows by overhead_percent of them, saved up over
 * one second of the stream at most (256 kB of it when the rate is
 * unknown or small). */
void mtcp_repair_budget_earn (MtcpRepairBudget * budget, gsize bytes,
    guint64 stream_bitrate);
/* The path as measured now; decides the gate until the next call. */
void mtcp_repair_budget_set_path (MtcpRepairBudget * budget,
    const MtcpRepairPath * path);
MtcpRepairGate mtcp_repair_budget_gate (MtcpRepairBudget * budget);
/* Takes @bytes from the credit if the gate is open and credit is left
 * (the last copy may overdraw it by its own size); FALSE otherwise. */
gboolean mtcp_repair_budget_spend (MtcpRepairBudget * budget, gsize bytes);
/* Gives back what was taken and not sent (no connection took the copy). */
void mtcp_repair_budget_refund (MtcpRepairBudget * budget, gsize bytes);
/* Whether a copy could be paid now: gate open and credit left. */
gboolean mtcp_repair_budget_can_spend (MtcpRepairBudget * budget);
gint64 mtcp_repair_budget_credit (MtcpRepairBudget * budget);
/* Copies refused for the gate (not for the credit), for stats. */
guint64 mtcp_repair_budget_refused (MtcpRepairBudget * budget);

const gchar *mtcp_repair_gate_nick (MtcpRepairGate gate);

G_END_DECLS

#endif
