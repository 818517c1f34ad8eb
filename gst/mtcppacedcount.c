/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcppacedcount.h"

#include <string.h>

/* one taken back this soon after one went: the buffer needed it */
#define REGRET_US (60 * G_USEC_PER_SEC)
#define TRIM_MAX_US (16 * MTCP_PACED_COUNT_TRIM_US)

void
mtcp_paced_count_init (MtcpPacedCount * pc, guint fewest, guint most)
{
  memset (pc, 0, sizeof (*pc));
  pc->fewest = MAX (fewest, 1);
  pc->most = MAX (most, pc->fewest);
  pc->trim_wait_us = MTCP_PACED_COUNT_TRIM_US;
}

guint
mtcp_paced_count_update (MtcpPacedCount * pc, gint64 now, guint count,
    gdouble buffer_s, gdouble target_s)
{
  gboolean low;

  if (target_s <= 0)
    return count;
  if (buffer_s >= MTCP_PACED_COUNT_HELD * target_s) {
    pc->filled = TRUE;
    pc->short_since_us = 0;
    if (pc->held_since_us == 0)
      pc->held_since_us = now;
  } else {
    pc->held_since_us = 0;
    if (pc->short_since_us == 0)
      pc->short_since_us = now;
  }
  if (!pc->filled)
    return count;

  /* low, or short of its target and not refilling for long: the count
   * carries the playback rate at most, no cushion back */
  low = (buffer_s < MTCP_PACED_COUNT_LOW * target_s &&
      now - pc->added_us >= MTCP_PACED_COUNT_ADD_HOLD_US) ||
      (pc->short_since_us &&
      now - pc->short_since_us >= MTCP_PACED_COUNT_REFILL_US &&
      now - pc->changed_us >= MTCP_PACED_COUNT_REFILL_US);
  if (low && count < pc->most) {
    if (pc->trimmed_us && now - pc->trimmed_us < REGRET_US) {
      pc->trim_wait_us = MIN (pc->trim_wait_us * 2, TRIM_MAX_US);
      pc->trimmed_us = 0;
    }
    pc->changed_us = pc->added_us = now;
    g_snprintf (pc->reason, sizeof (pc->reason), "paced: the playout buffer "
        "%s (%.2f s of %.2f) with %u connections: one more",
        buffer_s < MTCP_PACED_COUNT_LOW * target_s ? "ran low" :
        "does not refill", buffer_s, target_s, count);
    return count + 1;
  }
  if (pc->held_since_us && count > pc->fewest &&
      now - pc->held_since_us >= pc->trim_wait_us &&
      now - pc->changed_us >= pc->trim_wait_us) {
    guint n = MAX (pc->fewest, count / 2);

    pc->changed_us = pc->trimmed_us = now;
    pc->held_since_us = now;
    g_snprintf (pc->reason, sizeof (pc->reason), "paced: the playout buffer "
        "held %.0f s at %.2f s of %.2f with %u connections: %u",
        pc->trim_wait_us / (gdouble) G_USEC_PER_SEC, buffer_s, target_s,
        count, n);
    return n;
  }
  return count;
}
