/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcppacedcount.h"
#include "mtcpprotocol.h"

#include <string.h>

/* one taken back this soon after a cut: the buffer needed it */
#define REGRET_US (60 * G_USEC_PER_SEC)
#define TRIM_MAX_US (16 * MTCP_PACED_COUNT_TRIM_US)

MtcpPacedBuffer
mtcp_paced_buffer_judge (gdouble kept, gdouble target)
{
  if (target <= 0)
    return MTCP_PACED_BUFFER_SHORT;
  if (kept < MTCP_PACED_LOW * target)
    return MTCP_PACED_BUFFER_LOW;
  if (kept >= MTCP_PACED_HELD * target)
    return MTCP_PACED_BUFFER_HELD;
  return MTCP_PACED_BUFFER_SHORT;
}

void
mtcp_paced_count_init (MtcpPacedCount * pc, guint fewest, guint most)
{
  memset (pc, 0, sizeof (*pc));
  pc->fewest = MAX (fewest, 1);
  pc->most = MAX (most, pc->fewest);
  pc->trim_wait_us = MTCP_PACED_COUNT_TRIM_US;
}

void
mtcp_paced_count_restart (MtcpPacedCount * pc)
{
  mtcp_paced_count_init (pc, pc->fewest, pc->most);
}

static const gchar *
buffer_name (MtcpPacedBuffer buffer)
{
  return buffer == MTCP_PACED_BUFFER_LOW ? "ran low" :
      buffer == MTCP_PACED_BUFFER_HELD ? "held" : "does not refill";
}

guint
mtcp_paced_count_update (MtcpPacedCount * pc, gint64 now, guint count,
    MtcpPacedBuffer buffer)
{
  gboolean low;

  if (pc->started_us == 0)
    pc->started_us = now;
  if (buffer == MTCP_PACED_BUFFER_HELD) {
    pc->filled = TRUE;
    pc->short_since_us = 0;
    if (pc->held_since_us == 0)
      pc->held_since_us = now;
  } else {
    pc->held_since_us = 0;
    if (pc->short_since_us == 0)
      pc->short_since_us = now;
  }
  /* a buffer that never fills needs connections too */
  if (!pc->filled && now - pc->started_us >= MTCP_PACED_COUNT_FILL_US)
    pc->filled = TRUE;
  if (!pc->filled)
    return count;

  /* low, or short of its target and not refilling for long: the count
   * carries the playback rate at most, no cushion back */
  low = (buffer == MTCP_PACED_BUFFER_LOW &&
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
        "%s with %u connections: one more", buffer_name (buffer), count);
    return count + 1;
  }
  if (pc->held_since_us && count > pc->fewest &&
      now - pc->held_since_us >= pc->trim_wait_us &&
      now - pc->changed_us >= pc->trim_wait_us) {
    guint n = MAX (pc->fewest, (count + 1) / 2);

    g_snprintf (pc->reason, sizeof (pc->reason), "paced: the playout buffer "
        "held %.0f s with %u connections: %u",
        (now - pc->held_since_us) / (gdouble) G_USEC_PER_SEC, count, n);
    /* the last cut was not taken back: the wait comes down again */
    if (pc->trimmed_us)
      pc->trim_wait_us = MAX (pc->trim_wait_us / 2, MTCP_PACED_COUNT_TRIM_US);
    pc->changed_us = pc->trimmed_us = now;
    pc->held_since_us = now;
    return n;
  }
  return count;
}
