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
 * stream (docs/network-friendly.md). Here the count follows the playout
 * buffer the sink keeps at the receiver instead, as the sink reckons it
 * (REPORT's PACED_LOW and PACED_HELD): half as many connections once it
 * has held for a while, one more as soon as it runs low or while it does
 * not refill. A connection taken back soon after some were given up doubles
 * the wait before the next cut.
 *
 * Fed at every tick of the receiver's control (mtcpcontrol.c) while the
 * sink says it paces; plain data, no clock of its own (times are monotonic
 * us), no locking. */
#ifndef __MTCP_PACED_COUNT_H__
#define __MTCP_PACED_COUNT_H__

#include <glib.h>

G_BEGIN_DECLS

typedef enum {
  MTCP_PACED_BUFFER_LOW,        /* below half its target: one more */
  MTCP_PACED_BUFFER_SHORT,      /* between */
  MTCP_PACED_BUFFER_HELD,       /* at 80% or more: fewer after a while */
} MtcpPacedBuffer;

/* held this long: half as many (doubled after a regret, up to 16 times;
 * halved again after a cut that was not taken back) */
#define MTCP_PACED_COUNT_TRIM_US (5 * G_USEC_PER_SEC)
/* one added: this long before the next (its slow start) */
#define MTCP_PACED_COUNT_ADD_HOLD_US (2 * G_USEC_PER_SEC)
/* short of HELD this long since the count last changed: one more too */
#define MTCP_PACED_COUNT_REFILL_US (10 * G_USEC_PER_SEC)
/* a buffer that has not been HELD this long after the first update
 * counts as filled: the rules above apply */
#define MTCP_PACED_COUNT_FILL_US (10 * G_USEC_PER_SEC)

/* the fewest connections of a paced session: a lone connection's
 * retransmission timeouts (200 ms and more, doubling) stall the stream
 * while a short playout buffer runs dry; a second carries on */
#define MTCP_PACED_COUNT_FEWEST 2

typedef struct {
  guint fewest, most;
  gint64 started_us;            /* the first update */
  gboolean filled;              /* the buffer was HELD once, or FILL_US
                                 * went by */
  gint64 held_since_us;         /* at HELD or more since; 0: not */
  gint64 short_since_us;        /* below HELD since; 0: not */
  gint64 changed_us;            /* the count last changed here */
  gint64 added_us;              /* one was last added */
  gint64 trimmed_us;            /* one was last given up */
  gint64 trim_wait_us;
  gchar reason[160];
} MtcpPacedCount;

/* The sink's reckoning: @kept bytes of playout buffer (what is on its way
 * counted) against the @target it keeps there (the latency's worth), by
 * REPORT's thresholds (MTCP_PACED_LOW, MTCP_PACED_HELD); SHORT when there
 * is no target. */
MtcpPacedBuffer mtcp_paced_buffer_judge (gdouble kept, gdouble target);

void mtcp_paced_count_init (MtcpPacedCount * pc, guint fewest, guint most);
/* From the start again (the buffer emptied for a reason of its own: the
 * path went dark, the session or the stream started over), bounds kept */
void mtcp_paced_count_restart (MtcpPacedCount * pc);

/* At @now_us the session has @count connections and the sink says its
 * playout buffer is @buffer. Returns the count wanted; @reason says why
 * when it changed. Nothing moves before the buffer was first HELD (a
 * transfer's start fills it) or FILL_US went by. Half as many rounds up
 * (3: 2). A cut not taken back halves a doubled wait. */
guint mtcp_paced_count_update (MtcpPacedCount * pc, gint64 now_us,
    guint count, MtcpPacedBuffer buffer);

G_END_DECLS

#endif
