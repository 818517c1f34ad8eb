/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpkeyframeask.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_keyframe_ask_debug);
#define GST_CAT_DEFAULT mtcp_keyframe_ask_debug

struct _MtcpKeyframeAsk {
  guint64 skips_seen;
  gint64 skip_asked_us;         /* the last ask after skips, 0: none */
  gint64 dark_asked_us;         /* the last ask in the dark, 0: none */
};

MtcpKeyframeAsk *
mtcp_keyframe_ask_new (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_keyframe_ask_debug, "multitcpkeyframe", 0,
        "multitcp keyframes asked of the encoder");
    g_once_init_leave (&done, 1);
  }
  return g_new0 (MtcpKeyframeAsk, 1);
}

void
mtcp_keyframe_ask_free (MtcpKeyframeAsk * ask)
{
  g_free (ask);
}

void
mtcp_keyframe_ask_reset (MtcpKeyframeAsk * ask)
{
  ask->skips_seen = 0;
}

gboolean
mtcp_keyframe_ask_after_skips (MtcpKeyframeAsk * ask, gint64 now_us,
    guint64 skips, gboolean counts)
{
  /* one asked in the dark within its gap is still due at the receiver, or
   * about to come: the skip lands on it, and a second one would only add
   * bytes before the path's return */
  gboolean due = counts && skips > ask->skips_seen &&
      (ask->skip_asked_us == 0 ||
      now_us - ask->skip_asked_us >= MTCP_KEYFRAME_SKIP_GAP_US) &&
      (ask->dark_asked_us == 0 ||
      now_us - ask->dark_asked_us >= MTCP_KEYFRAME_DARK_GAP_US);

  if (due) {
    GST_DEBUG ("%" G_GUINT64_FORMAT " skips (%" G_GUINT64_FORMAT " before): "
        "a keyframe", skips, ask->skips_seen);
    ask->skip_asked_us = now_us;
  }
  ask->skips_seen = MAX (ask->skips_seen, skips);
  return due;
}

gboolean
mtcp_keyframe_ask_while_dark (MtcpKeyframeAsk * ask, gint64 now_us,
    gboolean take)
{
  gboolean due = ask->dark_asked_us == 0 ||
      now_us - ask->dark_asked_us >= MTCP_KEYFRAME_DARK_GAP_US;

  if (due && take) {
    GST_DEBUG ("the path is dark: a keyframe");
    ask->dark_asked_us = now_us;
  }
  return due;
}
