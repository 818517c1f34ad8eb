/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's playout buffer (seed 004's b_dst): stream released
 * downstream whose due time has not come, as a bounded FIFO of (due,
 * bytes). Times in ns of the pipeline's running time; no clock inside. */
#ifndef __MTCP_PLAYOUT_H__
#define __MTCP_PLAYOUT_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MtcpPlayout MtcpPlayout;

/* at most @max_entries buffers kept apart; beyond, the oldest two merge
 * (their bytes count until the later one is due) */
MtcpPlayout *mtcp_playout_new (guint max_entries);
void mtcp_playout_free (MtcpPlayout * playout);
void mtcp_playout_clear (MtcpPlayout * playout);

/* @bytes released now, due at @due (GST_CLOCK_TIME_NONE: not counted) */
void mtcp_playout_push (MtcpPlayout * playout, GstClockTime due, gsize bytes);
/* what is not yet due at @now: bytes, and how long until the last of it
 * is due */
guint64 mtcp_playout_bytes (MtcpPlayout * playout, GstClockTime now);
GstClockTime mtcp_playout_time (MtcpPlayout * playout, GstClockTime now);

G_END_DECLS

#endif
