#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpbitrate.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_bitrate_debug);
#define GST_CAT_DEFAULT mtcp_bitrate_debug

/* a fall of the fair share below the bitrate smaller than this is noise */
#define DOWN_TOLERANCE 0.95
/* and a rise above it smaller than this is no reason to climb */
#define UP_MARGIN 1.1

struct _MtcpBitrateControl {
  MtcpBitrateBounds bounds;
  guint64 bps;
  gint64 above_since_us;        /* the estimate held room above bps since */
  gint64 raised_us;             /* last step up */
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
set (MtcpBitrateControl * c, guint64 want, const gchar * why, guint64 * bps)
{
  want = CLAMP (want, c->bounds.min_bps, c->bounds.max_bps);
  if (want == c->bps)
    return FALSE;
  GST_DEBUG ("bitrate %" G_GUINT64_FORMAT " -> %" G_GUINT64_FORMAT
      " bit/s: %s", c->bps, want, why);
  c->bps = want;
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
    c->above_since_us = 0;
    return set (c, c->bounds.min_bps, "the path is dark", bps);
  }
  if (fair < c->bps * DOWN_TOLERANCE) {
    c->above_since_us = 0;
    if (!path_limited)
      return FALSE;             /* what a thin stream delivered is a floor */
    return set (c, (guint64) fair, "the path carries less", bps);
  }
  if (fair < c->bps * UP_MARGIN) {
    c->above_since_us = 0;
    return FALSE;
  }
  if (c->above_since_us == 0)
    c->above_since_us = now_us;
  if (now_us - c->above_since_us < MTCP_BITRATE_HOLD_US ||
      now_us - c->raised_us < MTCP_BITRATE_HOLD_US / 2)
    return FALSE;
  c->raised_us = now_us;
  return set (c, (guint64) MIN (fair, c->bps + MAX (c->bps *
              MTCP_BITRATE_STEP_UP, (fair - c->bps) * MTCP_BITRATE_APPROACH)),
      "the estimate held room above", bps);
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
