/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpprobe.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_probe_debug);
#define GST_CAT_DEFAULT mtcp_probe_debug

struct _MtcpRateProbe {
  gint64 start_us;
  gint64 end_us;                /* 0: no probe */
  gint64 ended_us;              /* when the last one ended */
  guint64 padding_bps;
  gdouble sent;                 /* bytes counted against the rate, this probe */
  guint64 count;
  guint64 stopped_early;
  guint64 bytes;
};

MtcpRateProbe *
mtcp_rate_probe_new (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_probe_debug, "multitcpprobe", 0,
        "multitcp probes of the path above the stream");
    g_once_init_leave (&done, 1);
  }
  return g_new0 (MtcpRateProbe, 1);
}

void
mtcp_rate_probe_free (MtcpRateProbe * p)
{
  g_free (p);
}

void
mtcp_rate_probe_start (MtcpRateProbe * p, gint64 now_us, guint64 padding_bps,
    gint64 duration_us)
{
  if (padding_bps == 0 || duration_us <= 0)
    return;
  p->start_us = now_us;
  p->end_us = now_us + duration_us;
  p->padding_bps = padding_bps;
  p->sent = 0;
  p->count++;
  GST_DEBUG ("probe %" G_GUINT64_FORMAT ": %" G_GUINT64_FORMAT " bit/s of "
      "padding for %" G_GINT64_FORMAT " ms", p->count, padding_bps,
      duration_us / 1000);
}

void
mtcp_rate_probe_stop (MtcpRateProbe * p, gint64 now_us, gboolean early)
{
  if (p->end_us == 0)
    return;
  if (early)
    p->stopped_early++;
  GST_DEBUG ("probe %" G_GUINT64_FORMAT " %s", p->count, early ?
      "ends early" : "ends");
  p->ended_us = MIN (p->end_us, now_us);
  p->end_us = 0;
}

gboolean
mtcp_rate_probe_active (MtcpRateProbe * p, gint64 now_us)
{
  if (p->end_us != 0 && now_us >= p->end_us)
    mtcp_rate_probe_stop (p, now_us, FALSE);
  return p->end_us != 0;
}

gboolean
mtcp_rate_probe_recent (MtcpRateProbe * p, gint64 now_us)
{
  return mtcp_rate_probe_active (p, now_us) || (p->ended_us != 0 &&
      now_us - p->ended_us < MTCP_PROBE_DURATION_US);
}

gsize
mtcp_rate_probe_due (MtcpRateProbe * p, gint64 now_us)
{
  gdouble earned, burst, owed;

  if (!mtcp_rate_probe_active (p, now_us) || now_us <= p->start_us)
    return 0;
  earned = p->padding_bps / 8.0 * (now_us - p->start_us) / G_USEC_PER_SEC;
  burst = p->padding_bps / 8.0 * MTCP_PROBE_BURST_US / G_USEC_PER_SEC;
  owed = earned - p->sent;
  if (owed > burst) {
    /* what a pause left owed is not made up at once */
    p->sent = earned - burst;
    owed = burst;
  }
  return owed >= MTCP_PROBE_MIN_BYTES ? (gsize) owed : 0;
}

void
mtcp_rate_probe_sent (MtcpRateProbe * p, gsize bytes)
{
  p->sent += bytes;
  p->bytes += bytes;
}

guint64
mtcp_rate_probe_count (const MtcpRateProbe * p)
{
  return p->count;
}

guint64
mtcp_rate_probe_stopped_early (const MtcpRateProbe * p)
{
  return p->stopped_early;
}

guint64
mtcp_rate_probe_bytes (const MtcpRateProbe * p)
{
  return p->bytes;
}
