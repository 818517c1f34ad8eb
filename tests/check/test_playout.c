/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the receiver's playout buffer (gst/mtcpplayout.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>

#include "mtcpplayout.h"

GST_START_TEST (test_due_buffers_leave)
{
  MtcpPlayout *p = mtcp_playout_new (64);
  guint i;

  /* ten 1000-byte frames due every 100 ms from 1 s */
  for (i = 0; i < 10; i++)
    mtcp_playout_push (p, GST_SECOND + i * 100 * GST_MSECOND, 1000);
  mtcp_playout_push (p, GST_CLOCK_TIME_NONE, 5000);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 0), 10000);
  fail_unless_equals_uint64 (mtcp_playout_time (p, 0), 1900 * GST_MSECOND);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, GST_SECOND), 9000);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 1450 * GST_MSECOND), 5000);
  fail_unless_equals_uint64 (mtcp_playout_time (p, 1450 * GST_MSECOND),
      450 * GST_MSECOND);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 5 * GST_SECOND), 0);
  fail_unless_equals_uint64 (mtcp_playout_time (p, 5 * GST_SECOND), 0);
  /* a B-frame due before the one released before it stays in order */
  mtcp_playout_push (p, 6 * GST_SECOND, 10);
  mtcp_playout_push (p, 5500 * GST_MSECOND, 20);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 5700 * GST_MSECOND), 30);
  mtcp_playout_clear (p);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 0), 0);
  mtcp_playout_free (p);
}

GST_END_TEST;

/* a receiver that releases far ahead (a file sent greedily) cannot grow it:
 * the oldest merge, the bytes still count */
GST_START_TEST (test_bounded)
{
  MtcpPlayout *p = mtcp_playout_new (16);
  guint i;

  for (i = 0; i < 100000; i++)
    mtcp_playout_push (p, (GstClockTime) i * GST_MSECOND, 100);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 0), 100 * 100000);
  /* the merged entries leave with the latest of them */
  fail_unless (mtcp_playout_bytes (p, 99990 * GST_MSECOND) <= 100 * 100000);
  fail_unless_equals_uint64 (mtcp_playout_bytes (p, 100000 * GST_MSECOND), 0);
  mtcp_playout_free (p);
}

GST_END_TEST;

static Suite *
playout_suite (void)
{
  Suite *s = suite_create ("playout");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_due_buffers_leave);
  tcase_add_test (tc, test_bounded);
  return s;
}

GST_CHECK_MAIN (playout);
