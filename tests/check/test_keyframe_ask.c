/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* When the sink asks its encoder for a keyframe (gst/mtcpkeyframeask.c):
 * after new skips at most once a second, in the dark each half second, and
 * the two counted apart. */
#include <gst/check/gstcheck.h>

#include "mtcpkeyframeask.h"

#define S G_USEC_PER_SEC

GST_START_TEST (test_after_skips_once_a_second)
{
  MtcpKeyframeAsk *k = mtcp_keyframe_ask_new ();
  gint64 t = 100 * S;

  fail_if (mtcp_keyframe_ask_after_skips (k, t, 0, TRUE));
  fail_unless (mtcp_keyframe_ask_after_skips (k, t, 1, TRUE));
  /* a new skip within the second is only noted */
  fail_if (mtcp_keyframe_ask_after_skips (k, t + S / 2, 2, TRUE));
  /* the same skips again: nothing new */
  fail_if (mtcp_keyframe_ask_after_skips (k, t + 2 * S, 2, TRUE));
  fail_unless (mtcp_keyframe_ask_after_skips (k, t + 2 * S, 3, TRUE));
  /* skips that are not counted (the strongest followed) ask nothing, and
   * are not asked for later */
  fail_if (mtcp_keyframe_ask_after_skips (k, t + 4 * S, 4, FALSE));
  fail_if (mtcp_keyframe_ask_after_skips (k, t + 4 * S, 4, TRUE));
  /* a new stream counts from 0 */
  mtcp_keyframe_ask_reset (k);
  fail_unless (mtcp_keyframe_ask_after_skips (k, t + 6 * S, 1, TRUE));
  mtcp_keyframe_ask_free (k);
}

GST_END_TEST;

GST_START_TEST (test_dark_each_half_second)
{
  MtcpKeyframeAsk *k = mtcp_keyframe_ask_new ();
  gint64 t = 100 * S;
  guint asked = 0, i;

  /* due is only looked at without @take */
  fail_unless (mtcp_keyframe_ask_while_dark (k, t, FALSE));
  fail_unless (mtcp_keyframe_ask_while_dark (k, t, FALSE));
  /* a frame every 33 ms for 3 s of dark */
  for (i = 0; i < 90; i++)
    if (mtcp_keyframe_ask_while_dark (k, t + i * 33333, TRUE))
      asked++;
  fail_unless_equals_int (asked, 6);
  mtcp_keyframe_ask_free (k);
}

GST_END_TEST;

/* A skip 0.1 s after a dark ask lands on that keyframe: nothing more is
 * asked. The path returns 0.8 s after the last dark ask and the session,
 * past that keyframe (no longer in time), skips: its keyframe is asked for
 * at once, not a second after the dark one (counted together, it waited
 * for the encoder's next own keyframe). And a skip does not hold back the
 * next dark one. */
GST_START_TEST (test_dark_and_skips_apart)
{
  MtcpKeyframeAsk *k = mtcp_keyframe_ask_new ();
  gint64 t = 100 * S;

  fail_unless (mtcp_keyframe_ask_while_dark (k, t, TRUE));
  fail_if (mtcp_keyframe_ask_after_skips (k, t + S / 10, 1, TRUE));
  fail_unless (mtcp_keyframe_ask_while_dark (k, t + S / 2, TRUE));
  fail_unless (mtcp_keyframe_ask_after_skips (k, t + 13 * S / 10, 2, TRUE));
  /* the path dark again: the skip's ask holds no dark one back */
  fail_unless (mtcp_keyframe_ask_while_dark (k, t + 14 * S / 10, TRUE));
  fail_if (mtcp_keyframe_ask_while_dark (k, t + 16 * S / 10, TRUE));
  mtcp_keyframe_ask_free (k);
}

GST_END_TEST;

static Suite *
keyframe_ask_suite (void)
{
  Suite *s = suite_create ("keyframe_ask");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_after_skips_once_a_second);
  tcase_add_test (tc, test_dark_each_half_second);
  tcase_add_test (tc, test_dark_and_skips_apart);
  return s;
}

GST_CHECK_MAIN (keyframe_ask);
