/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The receiver's reorder buffer: items keyed by a 64-bit sequence number,
 * released strictly in order. A missing sequence number is waited for until
 * the deadline of the first item held after it; then the gap is skipped and
 * that item is released marked discont. Items that arrive after their slot
 * was released, or after their own deadline, are late: refused and counted;
 * one that comes after its deadline but ahead of the release is given up
 * at once (after an outage the late ones come first, and what is in time
 * behind them goes at once, not at its own deadline).
 *
 * Bounded against a hostile sender (mtcp_reorder_set_limits): at most
 * MTCP_REORDER_MAX_RANGES skip ranges, a cap on the bytes held, and a
 * horizon no deadline may lie beyond.
 *
 * No locking: the owner serialises calls. Times are in any one monotonic
 * time base the owner chooses (multitcpsrc uses the pipeline running time). */
#ifndef __MTCP_REORDER_H__
#define __MTCP_REORDER_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MtcpReorder MtcpReorder;

/* Skip ranges held at most; beyond, the one furthest ahead is forgotten
 * (its seqs are then waited for like any gap). A sender that skips more
 * than this many disjoint ranges ahead of the release is not sane. */
#define MTCP_REORDER_MAX_RANGES 1024
/* What each held item costs towards the byte cap on top of its size: its
 * bookkeeping, so that a flood of empty items is bounded too. */
#define MTCP_REORDER_ITEM_COST 256

typedef enum {
  MTCP_REORDER_ACCEPTED,
  MTCP_REORDER_DUPLICATE,      /* already held: the caller frees its item */
  MTCP_REORDER_LATE,           /* slot released or deadline passed: caller frees */
  MTCP_REORDER_TOO_FAR,        /* seq beyond the window: protocol error */
  MTCP_REORDER_FULL,           /* over the byte cap: refused, caller frees */
} MtcpReorderPushResult;

typedef struct {
  guint64 released;            /* items handed out by pop */
  guint64 late;                /* refused as late; a given-up seq once */
  guint64 duplicates;
  guint64 skipped;             /* sequence numbers given up on at a deadline */
  guint64 sender_skipped;      /* sequence numbers the sender said never come */
  guint64 depth;               /* items held now */
  guint64 bytes;               /* bytes held now (sum of item sizes) */
  guint64 next_seq;            /* next sequence number to release */
  guint64 overflow;            /* refused over the byte cap */
  guint64 clamped;             /* deadlines pulled in to the horizon */
  guint64 ranges_dropped;      /* skip ranges forgotten over the range cap */
} MtcpReorderStats;

/* @window: the largest allowed distance seq - next_seq (e.g. 1 << 20).
 * @free_item frees items still held when the buffer is freed or flushed. */
MtcpReorder *mtcp_reorder_new (guint64 window, GDestroyNotify free_item);
void mtcp_reorder_free (MtcpReorder * reorder);

/* @max_bytes: cap on the sizes held plus MTCP_REORDER_ITEM_COST per item,
 * 0 = none. Over it, push refuses (MTCP_REORDER_FULL) all but the item
 * next in order, and pop gives up on gaps at once instead of at their
 * deadline until half the cap is free again.
 * @horizon: a deadline later than arrival + @horizon is pulled in to it,
 * GST_CLOCK_TIME_NONE = none (deadlines of GST_CLOCK_TIME_NONE stay). */
void mtcp_reorder_set_limits (MtcpReorder * reorder, guint64 max_bytes,
    GstClockTime horizon);

/* Drop everything held; the next item released will be @next_seq. */
void mtcp_reorder_reset (MtcpReorder * reorder, guint64 next_seq);

/* @deadline: the time by which the item must be released, or
 * GST_CLOCK_TIME_NONE for items that are never late (caps, EOS).
 * @now: the arrival time. @size: bytes accounted for in stats. */
MtcpReorderPushResult mtcp_reorder_push (MtcpReorder * reorder, guint64 seq,
    GstClockTime deadline, GstClockTime now, gsize size, gpointer item);

/* The sender will never send [first, end): those slots are skipped without
 * waiting (counted as sender_skipped), and the next release is discont.
 * O(log n) to find its place among the held ranges, which it merges with
 * when they overlap or touch. Returns FALSE when the range was not kept in
 * full: it starts beyond the window (a protocol error, like TOO_FAR), or
 * the range cap was exceeded and the range furthest ahead was forgotten. */
gboolean mtcp_reorder_skip_range (MtcpReorder * reorder, guint64 first,
    guint64 end);

/* Skip ranges held now (at most MTCP_REORDER_MAX_RANGES). */
guint mtcp_reorder_n_ranges (MtcpReorder * reorder);

/* Release the next item if it is in order, or if a gap before it has
 * reached the held item's deadline (@now >= deadline). Sets *discont when
 * sequence numbers were skipped since the previous release, *seq to its
 * number. Returns NULL when nothing can be released yet; then *wake_at is
 * the earliest time a gap expires, or GST_CLOCK_TIME_NONE if only new
 * arrivals can help. */
gpointer mtcp_reorder_pop (MtcpReorder * reorder, GstClockTime now,
    guint64 * seq, gboolean * discont, GstClockTime * wake_at);

/* After a push that came late: whether it was the seq the release waited
 * for with items held behind it (pop can release at once: wake it). */
gboolean mtcp_reorder_late_unblocks (MtcpReorder * reorder);

/* Highest sequence number below which everything has arrived or been
 * released; G_MAXUINT64 when nothing has arrived yet. */
guint64 mtcp_reorder_highest_in_order (MtcpReorder * reorder);

void mtcp_reorder_get_stats (MtcpReorder * reorder, MtcpReorderStats * stats);

/* Bytes held in order from the next to release: ready to play, not held
 * back by a gap. */
guint64 mtcp_reorder_in_order_bytes (MtcpReorder * reorder);

/* Deadline of the first held item, GST_CLOCK_TIME_NONE when empty: used to
 * report how much stream time is buffered. */
GstClockTime mtcp_reorder_first_deadline (MtcpReorder * reorder);

G_END_DECLS

#endif
