/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The count of a paced session from whether its playout buffer holds
 * (issue 28). A stored video the sink paces (transfer-control=
 * network-friendly) sends the playback rate, no more: its connections are
 * application-limited, and next to bulk flows they lose several times the
 * bottleneck's loss per segment, which ParS's Eq. 19 (the rate of a flow
 * that loss limits) reads as a need for more connections than carry the
 * stream (docs/network-friendly.md). Here the count follows the buffer the
 * sink keeps at the receiver instead: half as many connections once it has
 * held for a while, one more as soon as it runs low or while it does not
 * refill. A connection taken back soon after some were given up doubles
 * the wait before the next cut.
 *
 * Fed at every tick of the receiver's control (mtcpcontrol.c) while the
 * sink says it paces; plain data, no clock of its own (times are monotonic
 * us), no locking. */
#ifndef __MTCP_PACED_COUNT_H__
#define __MTCP_PACED_COUNT_H__

#include <glib.h>

G_BEGIN_DECLS

/* below this share of its target the buffer runs low: one more */
#define MTCP_PACED_COUNT_LOW 0.5
/* at this share or more it holds */
#define MTCP_PACED_COUNT_HELD 0.8
/* held this long: half as many (doubled after a regret, up to 16 times) */
#define MTCP_PACED_COUNT_TRIM_US (5 * G_USEC_PER_SEC)
/* one added: this long before the next (its slow start) */
#define MTCP_PACED_COUNT_ADD_HOLD_US (2 * G_USEC_PER_SEC)
/* short of HELD this long since the count last changed: one more too */
#define MTCP_PACED_COUNT_REFILL_US (10 * G_USEC_PER_SEC)

typedef struct {
  guint fewest, most;
  gboolean filled;              /* the buffer reached its target once */
  gint64 held_since_us;         /* at HELD or more since; 0: not */
  gint64 short_since_us;        /* below HELD since; 0: not */
  gint64 changed_us;            /* the count last changed here */
  gint64 added_us;              /* one was last added */
  gint64 trimmed_us;            /* one was last given up */
  gint64 trim_wait_us;
  gchar reason[160];
} MtcpPacedCount;

void mtcp_paced_count_init (MtcpPacedCount * pc, guint fewest, guint most);

/* At @now_us the session has @count connections wanted and the receiver
 * holds @buffer_s seconds of stream not yet played, of the @target_s the
 * sink keeps there. Returns the count wanted; @reason says why when it
 * changed. Nothing moves before the buffer first reached HELD of its
 * target (a transfer's start fills it). */
guint mtcp_paced_count_update (MtcpPacedCount * pc, gint64 now_us,
    guint count, gdouble buffer_s, gdouble target_s);

G_END_DECLS

#endif
