/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpbitrate.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_bitrate_debug);
#define GST_CAT_DEFAULT mtcp_bitrate_debug

/* a fall of the fair share below the bitrate smaller than this is noise */
#define DOWN_TOLERANCE 0.95
/* and a rise above it smaller than this is no reason to jump */
#define UP_MARGIN 1.1
/* a step down this soon after a step up: that step up failed */
#define FAILED_WITHIN_US (3 * G_USEC_PER_SEC)
/* the hold doubles after each failed step up, to at most 2^this holds */
#define MOST_BACKOFF 2

struct _MtcpBitrateControl {
  MtcpBitrateBounds bounds;
  guint64 bps;
  gint64 changed_us;            /* last change, either way */
  gint64 raised_us;             /* last step up */
  guint backoff;                /* step ups that failed in a row */
  guint64 changes;
};

MtcpBitrateControl *
mtcp_bitrate_control_new (const MtcpBitrateBounds * bounds, guint64 start_bps)
{
  MtcpBitrateControl *c = g_new0 (MtcpBitrateControl, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_bitrate_debug, "multitcpbitrate", 0,
        "multitcp encoder bitrate control");
    g_once_init_leave (&done, 1);
  }
  c->bounds = *bounds;
  if (c->bounds.max_bps < c->bounds.min_bps)
    c->bounds.max_bps = c->bounds.min_bps;
  c->bps = CLAMP (start_bps, c->bounds.min_bps, c->bounds.max_bps);
  return c;
}

void
mtcp_bitrate_control_free (MtcpBitrateControl * c)
{
  g_free (c);
}

static gboolean
set (MtcpBitrateControl * c, gint64 now_us, guint64 want, const gchar * why,
    guint64 * bps)
{
  want = CLAMP (want, c->bounds.min_bps, c->bounds.max_bps);
  if (want == c->bps)
    return FALSE;
  if (want < c->bps) {
    if (c->raised_us && now_us - c->raised_us < FAILED_WITHIN_US)
      c->backoff = MIN (c->backoff + 1, MOST_BACKOFF);
    else
      c->backoff = 0;
  } else {
    c->raised_us = now_us;
  }
  GST_DEBUG ("bitrate %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
      " bit/s: %s (next step up after %u s)", c->bps, want, why,
      (guint) ((MTCP_BITRATE_HOLD_US << c->backoff) / G_USEC_PER_SEC));
  c->bps = want;
  c->changed_us = now_us;
  c->changes++;
  *bps = want;
  return TRUE;
}

gboolean
mtcp_bitrate_control_update (MtcpBitrateControl * c, gint64 now_us,
    guint64 estimate_bps, gboolean path_limited, guint64 * bps)
{
  gdouble fair = estimate_bps * MTCP_BITRATE_SHARE;

  if (estimate_bps == 0) {
    /* the path went: no step up failed, and it comes back at one hold */
    c->raised_us = 0;
    c->backoff = 0;
    return set (c, now_us, c->bounds.min_bps, "the path is dark", bps);
  }
  /* the last change was a step up that the path took: one hold again */
  if (c->backoff > 0 && c->raised_us && c->changed_us == c->raised_us &&
      now_us - c->raised_us >= FAILED_WITHIN_US)
    c->backoff = 0;
  /* a cut also when the path still delivers the whole stream but its
   * queue grows: the fifth left drains it (tried: cutting only once it
   * delivers less than the stream made 16% more frames late, docs/
   * benchmarks.md) */
  if (path_limited && fair < c->bps * DOWN_TOLERANCE)
    return set (c, now_us, (guint64) fair, "the path carries less", bps);
  if (now_us - c->changed_us < (MTCP_BITRATE_HOLD_US << c->backoff))
    return FALSE;
  /* the estimate shows room: towards its share, at most a doubling */
  if (fair >= c->bps * UP_MARGIN)
    return set (c, now_us, (guint64) MIN (fair, c->bps * 2.0),
        "the estimate shows room", bps);
  /* a stream that fills less than the path shows no room: probe for it */
  if (!path_limited)
    return set (c, now_us, (guint64) (c->bps * (1 + MTCP_BITRATE_PROBE)),
        "nothing waits: probing", bps);
  return FALSE;
}

guint64
mtcp_bitrate_control_bps (const MtcpBitrateControl * c)
{
  return c->bps;
}

guint64
mtcp_bitrate_control_changes (const MtcpBitrateControl * c)
{
  return c->changes;
}
