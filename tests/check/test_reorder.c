/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#include <gst/check/gstcheck.h>

#include "mtcpreorder.h"
#include "mtcpskew.h"

#include <math.h>

#define NONE GST_CLOCK_TIME_NONE
#define WINDOW (1 << 20)

/* GLib's library constructor allocates a quark block it later drops on
 * purpose, before main. These ASan hooks (unused without ASan) suppress only
 * leaks allocated from ld.so's init; the slow unwinder is needed to see
 * that frame through GLib, which has no frame pointers. */
const char *__asan_default_options (void);
const char *__lsan_default_suppressions (void);

const char *
__asan_default_options (void)
{
  return "fast_unwind_on_malloc=0:print_suppressions=0";
}

const char *
__lsan_default_suppressions (void)
{
  return "leak:_dl_init\n";
}

static guint free_count;

static void
count_free (gpointer item)
{
  free_count++;
  g_free (item);
}

static gpointer
make_item (guint64 seq)
{
  guint64 *item = g_new (guint64, 1);

  *item = seq;
  return item;
}

/* Push a fresh item of @size, asserting the result; refused items are
 * freed here. */
static void
push_sized (MtcpReorder * reorder, guint64 seq, GstClockTime deadline,
    GstClockTime now, gsize size, MtcpReorderPushResult expected)
{
  gpointer item = make_item (seq);
  MtcpReorderPushResult res;

  res = mtcp_reorder_push (reorder, seq, deadline, now, size, item);
  fail_unless_equals_int (res, expected);
  if (res != MTCP_REORDER_ACCEPTED)
    g_free (item);
}

static void
push (MtcpReorder * reorder, guint64 seq, GstClockTime deadline,
    GstClockTime now, MtcpReorderPushResult expected)
{
  push_sized (reorder, seq, deadline, now, 10, expected);
}

/* Pop one item, asserting its seq and discont flag. */
static void
expect_pop (MtcpReorder * reorder, GstClockTime now, guint64 expected_seq,
    gboolean expected_discont)
{
  guint64 seq = G_MAXUINT64;
  gboolean discont = !expected_discont;
  GstClockTime wake_at = 0;
  guint64 *item;

  item = mtcp_reorder_pop (reorder, now, &seq, &discont, &wake_at);
  fail_unless (item != NULL, "expected seq %" G_GUINT64_FORMAT, expected_seq);
  fail_unless_equals_uint64 (seq, expected_seq);
  fail_unless_equals_uint64 (*item, expected_seq);
  fail_unless_equals_int (discont, expected_discont);
  g_free (item);
}

/* Assert nothing can be released at @now and the reported wake time. */
static void
expect_none (MtcpReorder * reorder, GstClockTime now, GstClockTime expected_wake)
{
  guint64 seq = 0;
  gboolean discont = TRUE;
  GstClockTime wake_at = 0;

  fail_unless (mtcp_reorder_pop (reorder, now, &seq, &discont,
          &wake_at) == NULL);
  fail_unless_equals_uint64 (wake_at, expected_wake);
}

static MtcpReorderStats
get_stats (MtcpReorder * reorder)
{
  MtcpReorderStats stats;

  mtcp_reorder_get_stats (reorder, &stats);
  return stats;
}

GST_START_TEST (test_in_order)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;
  guint64 i;

  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder),
      G_MAXUINT64);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), NONE);
  expect_none (reorder, 0, NONE);

  for (i = 0; i < 5; i++) {
    push (reorder, i, 1000 + i, 0, MTCP_REORDER_ACCEPTED);
    fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), i);
    expect_pop (reorder, 0, i, FALSE);
    fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), i);
  }
  expect_none (reorder, 0, NONE);

  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.released, 5);
  fail_unless_equals_uint64 (stats.next_seq, 5);
  fail_unless_equals_uint64 (stats.depth, 0);
  fail_unless_equals_uint64 (stats.bytes, 0);
  fail_unless_equals_uint64 (stats.skipped, 0);
  fail_unless_equals_uint64 (stats.late, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_out_of_order)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);

  push (reorder, 3, 100, 0, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder),
      G_MAXUINT64);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), 100);
  /* held behind a gap: nothing ready to play */
  fail_unless_equals_uint64 (mtcp_reorder_in_order_bytes (reorder), 0);
  expect_none (reorder, 0, 100);

  push (reorder, 1, 80, 0, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), 80);
  expect_none (reorder, 0, 80);

  push (reorder, 0, 70, 0, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 1);
  fail_unless_equals_uint64 (mtcp_reorder_in_order_bytes (reorder), 20);
  push (reorder, 2, 90, 0, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 3);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), 70);
  fail_unless_equals_uint64 (mtcp_reorder_in_order_bytes (reorder), 40);

  expect_pop (reorder, 0, 0, FALSE);
  fail_unless_equals_uint64 (mtcp_reorder_in_order_bytes (reorder), 30);
  expect_pop (reorder, 0, 1, FALSE);
  expect_pop (reorder, 0, 2, FALSE);
  expect_pop (reorder, 0, 3, FALSE);
  expect_none (reorder, 0, NONE);
  fail_unless_equals_uint64 (mtcp_reorder_in_order_bytes (reorder), 0);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 0);
  fail_unless_equals_uint64 (get_stats (reorder).released, 4);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_duplicate)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 2, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 0, 100, 0, MTCP_REORDER_DUPLICATE);
  push (reorder, 2, 100, 0, MTCP_REORDER_DUPLICATE);

  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.duplicates, 2);
  fail_unless_equals_uint64 (stats.depth, 2);
  fail_unless_equals_uint64 (stats.bytes, 20);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_late_after_release)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  /* a copy of one already released (resent after a connection died) is a
   * duplicate, not late */
  push (reorder, 0, 100, 0, MTCP_REORDER_DUPLICATE);
  fail_unless_equals_uint64 (get_stats (reorder).late, 0);
  fail_unless_equals_uint64 (get_stats (reorder).duplicates, 1);
  fail_unless_equals_uint64 (get_stats (reorder).depth, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_late_after_deadline)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);

  /* now == deadline is still in time, now > deadline is late */
  push (reorder, 0, 100, 100, MTCP_REORDER_ACCEPTED);
  push (reorder, 1, 100, 101, MTCP_REORDER_LATE);
  fail_unless_equals_uint64 (get_stats (reorder).late, 1);
  fail_unless_equals_uint64 (get_stats (reorder).depth, 1);
  /* another copy of it is a duplicate, not late again */
  push (reorder, 1, 100, 102, MTCP_REORDER_DUPLICATE);
  fail_unless_equals_uint64 (get_stats (reorder).late, 1);
  /* a NONE deadline is never late */
  push (reorder, 2, NONE, 5000, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 5000, 0, FALSE);
  /* 1 came late: given up at once, and the release is discont */
  expect_pop (reorder, 5000, 2, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 1);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* After an outage the frames that missed their deadline come first: the
 * ones in time behind them are released at once, not held to their own
 * deadline for a gap that is already settled. */
GST_START_TEST (test_late_not_waited_for)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  /* 1..3 come after their deadlines, 4 in time */
  push (reorder, 1, 200, 500, MTCP_REORDER_LATE);
  push (reorder, 2, 210, 500, MTCP_REORDER_LATE);
  push (reorder, 3, 220, 500, MTCP_REORDER_LATE);
  push (reorder, 4, 900, 500, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 500, 4, TRUE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.late, 3);
  fail_unless_equals_uint64 (stats.skipped, 3);
  fail_unless_equals_uint64 (stats.next_seq, 5);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 4);
  /* a copy of one of them later: a duplicate */
  push (reorder, 2, 210, 600, MTCP_REORDER_DUPLICATE);

  /* a gap with a late one inside: the missing one is still waited for */
  push (reorder, 6, 610, 700, MTCP_REORDER_LATE);
  push (reorder, 7, 1000, 700, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 700, 1000);
  expect_pop (reorder, 1000, 7, TRUE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.skipped, 5);
  fail_unless_equals_uint64 (stats.late, 4);

  /* a late copy of one held in time does not take it away */
  push (reorder, 8, 1100, 1000, MTCP_REORDER_ACCEPTED);
  push (reorder, 8, 1100, 1200, MTCP_REORDER_LATE);
  expect_pop (reorder, 1200, 8, FALSE);

  /* beyond the ring (16 slots here) a late one is not marked: the ring
   * does not grow for late items, and the gap waits as before */
  push (reorder, 100, 1100, 1200, MTCP_REORDER_LATE);
  push (reorder, 9, 3000, 1200, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 1200, 9, FALSE);
  push (reorder, 101, 2000, 1200, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 1200, 2000);
  expect_pop (reorder, 2000, 101, TRUE);

  /* the late one comes after the one in time behind it (a new connection
   * carries the stream, the old one resends its flight): the push tells
   * the owner to wake the release */
  push (reorder, 103, 3000, 2000, MTCP_REORDER_ACCEPTED);
  fail_if (mtcp_reorder_late_unblocks (reorder));
  push (reorder, 102, 1900, 2000, MTCP_REORDER_LATE);
  fail_unless (mtcp_reorder_late_unblocks (reorder));
  expect_pop (reorder, 2000, 103, TRUE);
  fail_if (mtcp_reorder_late_unblocks (reorder));

  /* one that came late inside a range the sender skipped counts with the
   * range */
  stats = get_stats (reorder);
  fail_unless (mtcp_reorder_skip_range (reorder, 104, 108));
  push (reorder, 105, 1900, 2000, MTCP_REORDER_LATE);
  push (reorder, 108, 3000, 2000, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 2000, 108, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).sender_skipped,
      stats.sender_skipped + 4);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, stats.skipped);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_gap_deadline)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);

  /* 1..3 missing; 4 and 5 held */
  push (reorder, 5, 300, 10, MTCP_REORDER_ACCEPTED);
  push (reorder, 4, 200, 10, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 0);
  expect_none (reorder, 50, 200);
  expect_none (reorder, 199, 200);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 0);

  /* the deadline of 4 expires: give up on 1..3 */
  expect_pop (reorder, 200, 4, TRUE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.skipped, 3);
  fail_unless_equals_uint64 (stats.next_seq, 5);
  /* what the sink is told: 5 is here, so everything to 5 is settled */
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 5);
  expect_pop (reorder, 200, 5, FALSE);
  expect_none (reorder, 200, NONE);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 5);
  /* and it keeps following what arrives after the gap */
  push (reorder, 6, 400, 210, MTCP_REORDER_ACCEPTED);
  push (reorder, 7, 400, 210, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 7);
  expect_pop (reorder, 210, 6, FALSE);
  expect_pop (reorder, 210, 7, FALSE);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 7);

  /* a frame of the skipped gap arriving now is late; another copy of it
   * (a TCP retransmission after an outage) is a duplicate, not late again */
  push (reorder, 2, 1000, 210, MTCP_REORDER_LATE);
  push (reorder, 2, 1000, 300, MTCP_REORDER_DUPLICATE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.late, 1);
  fail_unless_equals_uint64 (stats.duplicates, 1);
  fail_unless_equals_uint64 (stats.released, 5);
  fail_unless_equals_uint64 (stats.sender_skipped, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* A copy of a frame given up longer ago than the history reaches is late,
 * and leaves no mark: its bit stands for a newer seq now, whose first
 * arrival is still late, not a duplicate. */
GST_START_TEST (test_late_beyond_history)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  mtcp_reorder_skip_range (reorder, 1, 70009);
  expect_none (reorder, 10, NONE);
  push (reorder, 70009, 1000, 10, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 10, 70009, TRUE);
  /* 4470 and 70006 share a bit of the history (70006 - 4470 = 65536) */
  push (reorder, 4470, 1000, 20, MTCP_REORDER_LATE);
  push (reorder, 70006, 1000, 20, MTCP_REORDER_LATE);
  push (reorder, 70006, 1000, 30, MTCP_REORDER_DUPLICATE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.late, 2);
  fail_unless_equals_uint64 (stats.duplicates, 1);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_sender_skip)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);

  push (reorder, 5, 1000, 0, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 10, 1000);
  /* the sender will never send 1..4: release 5 at once */
  mtcp_reorder_skip_range (reorder, 1, 5);
  expect_pop (reorder, 10, 5, TRUE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.sender_skipped, 4);
  fail_unless_equals_uint64 (stats.skipped, 0);
  push (reorder, 3, 1000, 20, MTCP_REORDER_LATE);

  /* a skipped range with a resent frame inside: the frame is released */
  push (reorder, 8, 1000, 20, MTCP_REORDER_ACCEPTED);
  mtcp_reorder_skip_range (reorder, 6, 12);
  push (reorder, 10, 1000, 20, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 20, 8, TRUE);
  expect_pop (reorder, 20, 10, TRUE);
  /* nothing held: the rest of the range is passed, discont stays pending */
  expect_none (reorder, 20, NONE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.sender_skipped, 4 + 2 + 1 + 1);
  fail_unless_equals_uint64 (stats.next_seq, 12);
  push (reorder, 12, 1000, 20, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 20, 12, TRUE);
  push (reorder, 13, 1000, 20, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 20, 13, FALSE);

  /* a range entirely of already-held items releases them without discont */
  push (reorder, 14, 1000, 20, MTCP_REORDER_ACCEPTED);
  push (reorder, 15, 1000, 20, MTCP_REORDER_ACCEPTED);
  mtcp_reorder_skip_range (reorder, 14, 16);
  expect_pop (reorder, 20, 14, FALSE);
  expect_pop (reorder, 20, 15, FALSE);
  /* a range wholly in the past changes nothing */
  mtcp_reorder_skip_range (reorder, 0, 10);
  push (reorder, 16, 1000, 20, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 20, 16, FALSE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.sender_skipped, 8);
  fail_unless_equals_uint64 (stats.skipped, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_sender_skip_ranges)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  /* ranges arriving before the data, out of order and overlapping */
  mtcp_reorder_skip_range (reorder, 20, 25);
  mtcp_reorder_skip_range (reorder, 3, 6);
  mtcp_reorder_skip_range (reorder, 5, 9);
  mtcp_reorder_skip_range (reorder, 9, 10);
  mtcp_reorder_skip_range (reorder, 22, 30);
  mtcp_reorder_skip_range (reorder, 4, 5);

  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 1, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 2, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 10, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 12, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 30, NONE, 0, MTCP_REORDER_ACCEPTED);

  expect_pop (reorder, 0, 0, FALSE);
  expect_pop (reorder, 0, 1, FALSE);
  expect_pop (reorder, 0, 2, FALSE);
  /* [3, 10) merged */
  expect_pop (reorder, 0, 10, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).sender_skipped, 7);
  /* 11 is a real gap: waited for until 12's deadline */
  expect_none (reorder, 50, 100);
  expect_pop (reorder, 100, 12, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 1);
  /* 13..19 missing, [20, 30) skipped, 30 has no deadline: wait */
  expect_none (reorder, 1000, NONE);
  /* the gap before the range is given up at the deadline of 19; the
   * range part is counted as sender skipped */
  push (reorder, 19, 500, 0, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 499, 500);
  expect_pop (reorder, 500, 19, TRUE);
  expect_pop (reorder, 500, 30, TRUE);

  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.skipped, 1 + 6);
  fail_unless_equals_uint64 (stats.sender_skipped, 7 + 10);
  fail_unless_equals_uint64 (stats.released, 7);
  fail_unless_equals_uint64 (stats.depth, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_deadline_skip_stops_at_range)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;

  /* 0 missing, [1, 3) sender-skipped, 3 held with a deadline */
  mtcp_reorder_skip_range (reorder, 1, 3);
  push (reorder, 3, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 99, 100);
  expect_pop (reorder, 100, 3, TRUE);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.skipped, 1);
  fail_unless_equals_uint64 (stats.sender_skipped, 2);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_too_far)
{
  MtcpReorder *reorder = mtcp_reorder_new (64, g_free);

  push (reorder, 63, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 64, 100, 0, MTCP_REORDER_TOO_FAR);
  push (reorder, G_MAXUINT64, 100, 0, MTCP_REORDER_TOO_FAR);
  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  /* the window slides with next_seq */
  push (reorder, 64, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 65, 100, 0, MTCP_REORDER_TOO_FAR);
  fail_unless_equals_uint64 (get_stats (reorder).depth, 2);
  fail_unless_equals_uint64 (get_stats (reorder).late, 0);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_deadline_none_never_skips)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);

  push (reorder, 2, NONE, 0, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), NONE);
  expect_none (reorder, 0, NONE);
  expect_none (reorder, G_MAXINT64, NONE);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 0);

  push (reorder, 0, 10, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 1000, 0, FALSE);
  expect_none (reorder, G_MAXINT64, NONE);
  push (reorder, 1, 2000, 1000, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 1000, 1, FALSE);
  expect_pop (reorder, 1000, 2, FALSE);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_reset)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, count_free);
  MtcpReorderStats stats;

  free_count = 0;
  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  push (reorder, 0, 100, 0, MTCP_REORDER_DUPLICATE);
  push (reorder, 2, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 3, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 100, 100, 0, MTCP_REORDER_ACCEPTED);
  mtcp_reorder_skip_range (reorder, 200, 300);
  fail_unless_equals_int (free_count, 0);

  mtcp_reorder_reset (reorder, 1000);
  fail_unless_equals_int (free_count, 3);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.depth, 0);
  fail_unless_equals_uint64 (stats.bytes, 0);
  fail_unless_equals_uint64 (stats.next_seq, 1000);
  fail_unless_equals_uint64 (stats.released, 1);
  fail_unless_equals_uint64 (stats.late, 0);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder), 999);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), NONE);
  expect_none (reorder, 0, NONE);

  push (reorder, 999, 100, 0, MTCP_REORDER_LATE);
  push (reorder, 1000, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 1000, FALSE);

  /* reset back to 0: nothing arrived yet */
  push (reorder, 1001, 100, 0, MTCP_REORDER_ACCEPTED);
  mtcp_reorder_reset (reorder, 0);
  fail_unless_equals_int (free_count, 4);
  fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder),
      G_MAXUINT64);

  /* free releases what is still held */
  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 5, 100, 0, MTCP_REORDER_ACCEPTED);
  mtcp_reorder_free (reorder);
  fail_unless_equals_int (free_count, 6);
}

GST_END_TEST;

GST_START_TEST (test_stats_depth_bytes)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  MtcpReorderStats stats;
  guint64 i, seq;
  gboolean discont;
  GstClockTime wake_at;
  gpointer item;

  for (i = 0; i < 4; i++) {
    /* seqs 3, 2, 1, 0 of sizes 103, 102, 101, 100 */
    fail_unless_equals_int (mtcp_reorder_push (reorder, 3 - i, 100, 0,
            103 - i, make_item (3 - i)), MTCP_REORDER_ACCEPTED);
    stats = get_stats (reorder);
    fail_unless_equals_uint64 (stats.depth, i + 1);
  }
  fail_unless_equals_uint64 (get_stats (reorder).bytes, 406);

  item = mtcp_reorder_pop (reorder, 0, &seq, &discont, &wake_at);
  g_free (item);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.depth, 3);
  fail_unless_equals_uint64 (stats.bytes, 306);

  item = mtcp_reorder_pop (reorder, 0, &seq, &discont, &wake_at);
  g_free (item);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.depth, 2);
  fail_unless_equals_uint64 (stats.bytes, 205);
  fail_unless_equals_uint64 (stats.released, 2);

  mtcp_reorder_free (reorder);
}

GST_END_TEST;

GST_START_TEST (test_random_window)
{
  const guint n = 10000, win = 64;
  /* the window is exactly the reorder distance: TOO_FAR must never happen */
  MtcpReorder *reorder = mtcp_reorder_new (win, g_free);
  GRand *rand = g_rand_new_with_seed (4242);
  guint64 *order = g_new (guint64, n);
  guint64 cand[64];
  guint n_cand = 0, added = 0;
  guint64 expected = 0, max_depth = 0;
  guint i, k;
  MtcpReorderStats stats;

  /* a random permutation where each seq is drawn among the unpushed ones
   * in [lowest unpushed, lowest unpushed + win) */
  for (i = 0; i < n; i++) {
    guint64 low = G_MAXUINT64;

    for (k = 0; k < n_cand; k++)
      low = MIN (low, cand[k]);
    if (n_cand == 0)
      low = added;
    while (added < n && added < low + win)
      cand[n_cand++] = added++;
    k = g_rand_int_range (rand, 0, n_cand);
    order[i] = cand[k];
    cand[k] = cand[--n_cand];
  }

  for (i = 0; i < n; i++) {
    guint64 seq;
    gboolean discont;
    GstClockTime wake_at;
    guint64 *item;

    push (reorder, order[i], 1000000 + order[i], i, MTCP_REORDER_ACCEPTED);
    max_depth = MAX (max_depth, get_stats (reorder).depth);
    while ((item = mtcp_reorder_pop (reorder, i, &seq, &discont, &wake_at))) {
      fail_unless_equals_uint64 (seq, expected);
      fail_unless_equals_uint64 (*item, expected);
      fail_if (discont);
      g_free (item);
      expected++;
    }
    if (get_stats (reorder).depth > 0)
      fail_unless_equals_uint64 (wake_at, mtcp_reorder_first_deadline
          (reorder));
    fail_unless_equals_uint64 (mtcp_reorder_highest_in_order (reorder),
        expected - 1);
  }

  fail_unless_equals_uint64 (expected, n);
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (stats.released, n);
  fail_unless_equals_uint64 (stats.depth, 0);
  fail_unless_equals_uint64 (stats.bytes, 0);
  fail_unless_equals_uint64 (stats.skipped, 0);
  fail_unless_equals_uint64 (stats.late, 0);
  fail_unless_equals_uint64 (stats.duplicates, 0);
  fail_unless (max_depth > 1 && max_depth <= win);

  g_free (order);
  g_rand_free (rand);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* A hostile sender's flood of disjoint SKIPs: the ranges held stay at the
 * cap (the ones furthest ahead are forgotten), each insert is a binary
 * search, and the ones kept still skip. */
GST_START_TEST (test_skip_flood_bounded)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  guint i, refused = 0;

  for (i = 0; i < 40000; i++) {
    /* back to front: each would be inserted at the start of the array */
    guint64 first = 2 * (guint64) (40000 - i) + 1;
    if (!mtcp_reorder_skip_range (reorder, first, first + 1))
      refused++;
    fail_unless (mtcp_reorder_n_ranges (reorder) <= MTCP_REORDER_MAX_RANGES);
  }
  fail_unless_equals_int (mtcp_reorder_n_ranges (reorder),
      MTCP_REORDER_MAX_RANGES);
  fail_unless_equals_int (refused, 40000 - MTCP_REORDER_MAX_RANGES);
  fail_unless_equals_uint64 (get_stats (reorder).ranges_dropped,
      40000 - MTCP_REORDER_MAX_RANGES);

  /* the lowest ranges were kept: 3, 5, 7 ... skipped at once */
  push (reorder, 0, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 1, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 2, 100, 0, MTCP_REORDER_ACCEPTED);
  push (reorder, 4, 100, 0, MTCP_REORDER_ACCEPTED);
  expect_pop (reorder, 0, 0, FALSE);
  expect_pop (reorder, 0, 1, FALSE);
  expect_pop (reorder, 0, 2, FALSE);
  expect_pop (reorder, 0, 4, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).sender_skipped, 1);
  fail_unless_equals_int (mtcp_reorder_n_ranges (reorder),
      MTCP_REORDER_MAX_RANGES - 1);

  /* one range over all of them merges them into one */
  fail_unless (mtcp_reorder_skip_range (reorder, 5, 100000));
  fail_unless_equals_int (mtcp_reorder_n_ranges (reorder), 1);
  /* a range starting beyond the window is refused */
  fail_if (mtcp_reorder_skip_range (reorder, 5 + WINDOW, 6 + WINDOW));
  fail_unless_equals_int (mtcp_reorder_n_ranges (reorder), 1);
  /* extreme ends are harmless */
  fail_unless (mtcp_reorder_skip_range (reorder, 0, G_MAXUINT64));
  fail_if (mtcp_reorder_skip_range (reorder, G_MAXUINT64 - 1, G_MAXUINT64));
  fail_unless_equals_int (mtcp_reorder_n_ranges (reorder), 1);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* Merging against a model: whatever order ranges come in, the seqs they
 * cover are skipped and no others. */
GST_START_TEST (test_skip_merge_random)
{
  GRand *rand = g_rand_new_with_seed (22);
  guint round;

  for (round = 0; round < 50; round++) {
    MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
    gboolean covered[512] = { FALSE, };
    guint64 seq, n_covered = 0, prev = G_MAXUINT64;
    guint i;

    for (i = 0; i < 60; i++) {
      guint64 first = g_rand_int_range (rand, 0, 500);
      guint64 end = first + g_rand_int_range (rand, 1, 12);
      fail_unless (mtcp_reorder_skip_range (reorder, first, end));
      for (seq = first; seq < end; seq++)
        covered[seq] = TRUE;
    }
    for (seq = 0; seq < 512; seq++) {
      if (covered[seq])
        n_covered++;
      else
        push (reorder, seq, NONE, 0, MTCP_REORDER_ACCEPTED);
    }
    for (;;) {
      gboolean discont;
      guint64 *item = mtcp_reorder_pop (reorder, 0, &seq, &discont, NULL);
      if (item == NULL)
        break;
      fail_if (covered[seq]);
      /* discont exactly when covered seqs lie between two releases */
      fail_unless_equals_int (discont, seq > 0 && (prev == G_MAXUINT64 ?
              TRUE : seq != prev + 1));
      prev = seq;
      g_free (item);
    }
    fail_unless_equals_uint64 (get_stats (reorder).sender_skipped, n_covered);
    fail_unless_equals_uint64 (get_stats (reorder).depth, 0);
    mtcp_reorder_free (reorder);
  }
  g_rand_free (rand);
}

GST_END_TEST;

/* The byte cap: items beyond it are refused and counted, the next in order
 * is always taken, and the gap everything waits behind is given up at once
 * instead of at its deadline. */
GST_START_TEST (test_byte_cap)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);
  const guint64 cap = 10 * (1000 + MTCP_REORDER_ITEM_COST);
  MtcpReorderStats stats;
  guint64 seq, accepted = 0;

  mtcp_reorder_set_limits (reorder, cap, NONE);
  /* 0 is missing: 1.. wait behind it until the cap is reached */
  for (seq = 1; seq <= 100; seq++) {
    gpointer item = make_item (seq);
    MtcpReorderPushResult r = mtcp_reorder_push (reorder, seq, 1000, 0, 1000,
        item);
    if (r == MTCP_REORDER_ACCEPTED) {
      accepted++;
    } else {
      fail_unless_equals_int (r, MTCP_REORDER_FULL);
      g_free (item);
    }
  }
  stats = get_stats (reorder);
  fail_unless_equals_uint64 (accepted, 10);
  fail_unless_equals_uint64 (stats.depth, 10);
  fail_unless_equals_uint64 (stats.bytes, 10 * 1000);
  fail_unless_equals_uint64 (stats.overflow, 90);

  /* full: 0 is given up long before its deadline (1000) */
  expect_pop (reorder, 1, 1, TRUE);
  fail_unless_equals_uint64 (get_stats (reorder).skipped, 1);
  for (seq = 2; seq <= 10; seq++)
    expect_pop (reorder, 1, seq, FALSE);
  expect_none (reorder, 1, NONE);

  /* the item next in order is taken even over the cap */
  for (seq = 12; seq < 22; seq++)
    push_sized (reorder, seq, 1000, 0, 1000, MTCP_REORDER_ACCEPTED);
  push_sized (reorder, 22, 1000, 0, 1000, MTCP_REORDER_FULL);
  push_sized (reorder, 11, 1000, 0, 1000, MTCP_REORDER_ACCEPTED);
  for (seq = 11; seq < 22; seq++)
    expect_pop (reorder, 1, seq, FALSE);
  /* below half the cap again: gaps wait for their deadline */
  push (reorder, 23, 1000, 0, MTCP_REORDER_ACCEPTED);
  expect_none (reorder, 1, 1000);
  expect_pop (reorder, 1000, 23, TRUE);

  /* items without size count too: a flood of them stays bounded */
  for (seq = 30; seq < 100000; seq++) {
    gpointer item = make_item (seq);
    if (mtcp_reorder_push (reorder, seq, NONE, 0, 0, item) !=
        MTCP_REORDER_ACCEPTED)
      g_free (item);
  }
  fail_unless (get_stats (reorder).depth * MTCP_REORDER_ITEM_COST <= cap);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* A deadline far in the future is pulled in to arrival + horizon: a gap
 * before it waits no longer than that. */
GST_START_TEST (test_deadline_horizon)
{
  MtcpReorder *reorder = mtcp_reorder_new (WINDOW, g_free);

  mtcp_reorder_set_limits (reorder, 0, 1000);
  push (reorder, 1, G_MAXINT64, 500, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (mtcp_reorder_first_deadline (reorder), 1500);
  push (reorder, 2, G_MAXUINT64 - 1, 500, MTCP_REORDER_ACCEPTED);
  /* within the horizon: unchanged */
  push (reorder, 3, 1200, 500, MTCP_REORDER_ACCEPTED);
  fail_unless_equals_uint64 (get_stats (reorder).clamped, 2);
  expect_none (reorder, 1499, 1500);
  expect_pop (reorder, 1500, 1, TRUE);
  expect_pop (reorder, 1500, 2, FALSE);
  expect_pop (reorder, 1500, 3, FALSE);

  /* extreme arrival times and seqs: refused or handled, nothing wraps */
  push (reorder, 4, G_MAXUINT64 - 1, G_MAXUINT64 - 2, MTCP_REORDER_ACCEPTED);
  push (reorder, 5, 0, G_MAXUINT64 - 1, MTCP_REORDER_LATE);
  push (reorder, G_MAXUINT64, G_MAXUINT64 - 1, 0, MTCP_REORDER_TOO_FAR);
  expect_pop (reorder, G_MAXUINT64 - 1, 4, FALSE);
  mtcp_reorder_free (reorder);
}

GST_END_TEST;

/* The clock skew estimate fed the times a sink may send: no signed
 * overflow (UBSan), a correction that stays finite and bounded. */
GST_START_TEST (test_skew_extreme_times)
{
  static const GstClockTime times[] = { 0, 1, G_MAXINT64 / 2, G_MAXINT64,
    (GstClockTime) G_MAXINT64 + 1, G_MAXUINT64 - 1
  };
  MtcpSkew *skew = mtcp_skew_new (GST_MSECOND, 5);
  guint i, j, k;

  for (k = 0; k < 3; k++) {
    mtcp_skew_reset (skew);
    for (i = 0; i < G_N_ELEMENTS (times); i++) {
      for (j = 0; j < G_N_ELEMENTS (times); j++) {
        gint64 c;

        mtcp_skew_observe (skew, times[(i + k) % G_N_ELEMENTS (times)],
            times[j] + i * 10 * GST_MSECOND);
        c = mtcp_skew_correction (skew, times[j]);
        fail_unless (c >= G_MININT64 / 2 && c <= G_MAXINT64 / 2);
      }
    }
    fail_unless (isfinite (mtcp_skew_get_ppm (skew)));
  }
  mtcp_skew_free (skew);
}

GST_END_TEST;

static Suite *
reorder_suite (void)
{
  Suite *s = suite_create ("reorder");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_in_order);
  tcase_add_test (tc, test_out_of_order);
  tcase_add_test (tc, test_duplicate);
  tcase_add_test (tc, test_late_after_release);
  tcase_add_test (tc, test_late_after_deadline);
  tcase_add_test (tc, test_late_not_waited_for);
  tcase_add_test (tc, test_gap_deadline);
  tcase_add_test (tc, test_sender_skip);
  tcase_add_test (tc, test_late_beyond_history);
  tcase_add_test (tc, test_sender_skip_ranges);
  tcase_add_test (tc, test_deadline_skip_stops_at_range);
  tcase_add_test (tc, test_too_far);
  tcase_add_test (tc, test_deadline_none_never_skips);
  tcase_add_test (tc, test_reset);
  tcase_add_test (tc, test_stats_depth_bytes);
  tcase_add_test (tc, test_random_window);
  tcase_add_test (tc, test_skip_flood_bounded);
  tcase_add_test (tc, test_skip_merge_random);
  tcase_add_test (tc, test_byte_cap);
  tcase_add_test (tc, test_deadline_horizon);
  tcase_add_test (tc, test_skew_extreme_times);
  return s;
}

GST_CHECK_MAIN (reorder);
