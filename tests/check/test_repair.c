/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink's repair budget (gst/mtcprepair.c), fed with traces of a path:
 * copies come only from spare capacity, within copy-overhead. */
#include <gst/check/gstcheck.h>

#include "mtcprepair.h"

/* One 100 ms step of a trace: what the windows carry, whether the path is
 * dark, and how many bytes of copies the sink would like to send. */
typedef struct {
  guint64 capacity_bps;
  gboolean dark;
  gsize wanted;
} Step;

/* Runs @n steps of a 4 Mbit/s stream (50 kB every 100 ms) through a budget
 * of @percent; returns the bytes copied, per step in @copied. */
static gsize
run_trace (guint percent, const Step * steps, guint n, gsize * copied)
{
  MtcpRepairBudget *b = mtcp_repair_budget_new (percent);
  const guint64 stream_bps = 4000000;
  gsize total = 0;
  guint i;

  for (i = 0; i < n; i++) {
    MtcpRepairPath path = { steps[i].capacity_bps, stream_bps, steps[i].dark };
    gsize want = steps[i].wanted;

    mtcp_repair_budget_earn (b, stream_bps / 8 / 10, stream_bps);
    mtcp_repair_budget_set_path (b, &path);
    copied[i] = 0;
    /* copies of 1316 bytes, as many as the budget takes */
    while (want > 0 && mtcp_repair_budget_spend (b, 1316)) {
      copied[i] += 1316;
      want = want > 1316 ? want - 1316 : 0;
    }
    total += copied[i];
  }
  mtcp_repair_budget_free (b);
  return total;
}

GST_START_TEST (test_repair_only_from_spare_capacity)
{
  /* 2 s with spare room, 1 s where the path carries the stream only, 2 s
   * dark (an outage), 2 s of spare room again; copies wanted throughout */
  Step steps[70];
  gsize copied[70], total, open_total = 0;
  guint i;

  for (i = 0; i < 70; i++) {
    steps[i].capacity_bps = 12000000;
    steps[i].dark = FALSE;
    steps[i].wanted = 100000;
    if (i >= 20 && i < 30)
      steps[i].capacity_bps = 4200000;  /* within the margin: no spare */
    if (i >= 30 && i < 50) {
      steps[i].capacity_bps = 1000000;
      steps[i].dark = TRUE;
    }
  }
  total = run_trace (25, steps, 70, copied);
  for (i = 20; i < 50; i++)
    fail_unless_equals_uint64 (copied[i], 0);
  for (i = 0; i < 20; i++)
    open_total += copied[i];
  fail_unless (open_total > 0);
  /* all of it within 25% of the stream (7 s x 500 kB/s), one copy over */
  fail_unless (total <= 7 * 500000 / 4 + 1316, "%" G_GSIZE_FORMAT, total);
  /* the credit saved while copies were not allowed is spent after, but
   * no more than one second's share of it */
  {
    gsize after = 0;
    for (i = 50; i < 51; i++)
      after += copied[i];
    fail_unless (after <= 500000 / 4 + 1316, "%" G_GSIZE_FORMAT, after);
  }
}

GST_END_TEST;

GST_START_TEST (test_repair_budget_bounds)
{
  MtcpRepairBudget *b = mtcp_repair_budget_new (25);
  MtcpRepairPath spare = { 100000000, 1000000, FALSE };
  MtcpRepairBudget *off = mtcp_repair_budget_new (0);
  guint i, n = 0;

  mtcp_repair_budget_set_path (b, &spare);
  /* nothing earned: nothing to spend */
  fail_if (mtcp_repair_budget_can_spend (b));
  fail_if (mtcp_repair_budget_spend (b, 100));
  /* 4000 bytes of stream: 1000 of copies */
  mtcp_repair_budget_earn (b, 4000, 1000000);
  fail_unless_equals_int64 (mtcp_repair_budget_credit (b), 1000);
  for (i = 0; i < 10; i++)
    n += mtcp_repair_budget_spend (b, 400);
  /* 400 + 400 + 400 (the last overdraws), then nothing */
  fail_unless_equals_int (n, 3);
  mtcp_repair_budget_refund (b, 400);
  fail_unless_equals_int64 (mtcp_repair_budget_credit (b), 200);
  /* saved up over one second of the stream at most (256 kB floor) */
  mtcp_repair_budget_earn (b, 100 * 1000 * 1000, 1000000);
  fail_unless_equals_int64 (mtcp_repair_budget_credit (b), 256 * 1024 / 4);
  /* extreme values do not overflow */
  mtcp_repair_budget_earn (b, G_MAXSIZE, G_MAXUINT64);
  fail_unless (mtcp_repair_budget_credit (b) > 0);
  /* copy-overhead 0: never, and not counted as refused */
  mtcp_repair_budget_set_path (off, &spare);
  mtcp_repair_budget_earn (off, 1000000, 1000000);
  fail_if (mtcp_repair_budget_spend (off, 1));
  fail_unless_equals_int (mtcp_repair_budget_gate (off), MTCP_REPAIR_OFF);
  fail_unless_equals_uint64 (mtcp_repair_budget_refused (off), 0);
  mtcp_repair_budget_free (off);
  mtcp_repair_budget_free (b);
}

GST_END_TEST;

GST_START_TEST (test_repair_gate_follows_path)
{
  MtcpRepairBudget *b = mtcp_repair_budget_new (25);
  MtcpRepairPath p = { 0, 4000000, FALSE };

  mtcp_repair_budget_earn (b, 100000, 4000000);
  p.capacity_bps = 4000000 * (1.0 + MTCP_REPAIR_SPARE_MARGIN);
  mtcp_repair_budget_set_path (b, &p);
  fail_unless_equals_int (mtcp_repair_budget_gate (b),
      MTCP_REPAIR_CAPACITY_LIMITED);
  fail_if (mtcp_repair_budget_spend (b, 100));
  fail_unless_equals_uint64 (mtcp_repair_budget_refused (b), 1);
  p.capacity_bps = 4000000 * (1.0 + MTCP_REPAIR_SPARE_MARGIN) + 1000;
  mtcp_repair_budget_set_path (b, &p);
  fail_unless_equals_int (mtcp_repair_budget_gate (b), MTCP_REPAIR_OPEN);
  fail_unless (mtcp_repair_budget_spend (b, 100));
  p.dark = TRUE;
  mtcp_repair_budget_set_path (b, &p);
  fail_unless_equals_int (mtcp_repair_budget_gate (b), MTCP_REPAIR_DARK);
  fail_if (mtcp_repair_budget_can_spend (b));
  /* an unknown stream rate (0) with windows open: spare */
  p.dark = FALSE;
  p.stream_bps = 0;
  mtcp_repair_budget_set_path (b, &p);
  fail_unless_equals_int (mtcp_repair_budget_gate (b), MTCP_REPAIR_OPEN);
  mtcp_repair_budget_free (b);
}

GST_END_TEST;

static Suite *
repair_suite (void)
{
  Suite *s = suite_create ("multitcp-repair");
  TCase *tc = tcase_create ("repair");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_repair_only_from_spare_capacity);
  tcase_add_test (tc, test_repair_budget_bounds);
  tcase_add_test (tc, test_repair_gate_follows_path);
  return s;
}

GST_CHECK_MAIN (repair);
