/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcprepair.h"

#include <gst/gst.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_repair_debug);
#define GST_CAT_DEFAULT mtcp_repair_debug

/* the credit saved up when the stream's rate is small or unknown */
#define MIN_SAVED_BYTES (256 * 1024)

struct _MtcpRepairBudget {
  guint percent;
  gint64 credit;                /* bytes copies may still take */
  MtcpRepairGate gate;
  guint64 refused;
};

MtcpRepairBudget *
mtcp_repair_budget_new (guint overhead_percent)
{
  MtcpRepairBudget *budget = g_new0 (MtcpRepairBudget, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_repair_debug, "multitcprepair", 0,
        "multitcp repair budget");
    g_once_init_leave (&done, 1);
  }
  budget->percent = MIN (overhead_percent, 100);
  budget->gate = budget->percent ? MTCP_REPAIR_OPEN : MTCP_REPAIR_OFF;
  return budget;
}

void
mtcp_repair_budget_free (MtcpRepairBudget * budget)
{
  g_free (budget);
}

void
mtcp_repair_budget_earn (MtcpRepairBudget * budget, gsize bytes,
    guint64 stream_bitrate)
{
  gint64 most = (gint64) MAX (MIN (stream_bitrate, G_MAXINT64 / 100) / 8,
      MIN_SAVED_BYTES) * budget->percent / 100;

  budget->credit = MIN (budget->credit +
      (gint64) MIN (bytes, G_MAXINT32) * budget->percent / 100, most);
}

void
mtcp_repair_budget_set_path (MtcpRepairBudget * budget,
    const MtcpRepairPath * path)
{
  MtcpRepairGate gate;

  if (budget->percent == 0)
    gate = MTCP_REPAIR_OFF;
  else if (path->dark)
    gate = MTCP_REPAIR_DARK;
  else if ((gdouble) path->capacity_bps <= (gdouble) path->stream_bps *
      (1.0 + MTCP_REPAIR_SPARE_MARGIN))
    gate = MTCP_REPAIR_CAPACITY_LIMITED;
  else
    gate = MTCP_REPAIR_OPEN;
  if (gate != budget->gate)
    GST_DEBUG ("repair %s -> %s (windows carry %" G_GUINT64_FORMAT
        " bit/s, the stream needs %" G_GUINT64_FORMAT ")",
        mtcp_repair_gate_nick (budget->gate), mtcp_repair_gate_nick (gate),
        path->capacity_bps, path->stream_bps);
  budget->gate = gate;
}

MtcpRepairGate
mtcp_repair_budget_gate (MtcpRepairBudget * budget)
{
  return budget->gate;
}

gboolean
mtcp_repair_budget_can_spend (MtcpRepairBudget * budget)
{
  return budget->gate == MTCP_REPAIR_OPEN && budget->credit > 0;
}

gboolean
mtcp_repair_budget_spend (MtcpRepairBudget * budget, gsize bytes)
{
  if (budget->gate != MTCP_REPAIR_OPEN) {
    if (budget->gate != MTCP_REPAIR_OFF)
      budget->refused++;
    return FALSE;
  }
  if (budget->credit <= 0)
    return FALSE;
  budget->credit -= (gint64) MIN (bytes, G_MAXINT32);
  return TRUE;
}

void
mtcp_repair_budget_refund (MtcpRepairBudget * budget, gsize bytes)
{
  budget->credit += (gint64) MIN (bytes, G_MAXINT32);
}

gint64
mtcp_repair_budget_credit (MtcpRepairBudget * budget)
{
  return budget->credit;
}

guint64
mtcp_repair_budget_refused (MtcpRepairBudget * budget)
{
  return budget->refused;
}

const gchar *
mtcp_repair_gate_nick (MtcpRepairGate gate)
{
  switch (gate) {
    case MTCP_REPAIR_OPEN:
      return "open";
    case MTCP_REPAIR_CAPACITY_LIMITED:
      return "capacity-limited";
    case MTCP_REPAIR_DARK:
      return "dark";
    case MTCP_REPAIR_OFF:
      return "off";
  }
  return "unknown";
}
