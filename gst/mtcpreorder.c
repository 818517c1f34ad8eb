/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpreorder.h"

#include <string.h>

#define HISTORY 65536

GST_DEBUG_CATEGORY_STATIC (mtcp_reorder_debug);
#define GST_CAT_DEFAULT mtcp_reorder_debug

typedef struct
{
  gpointer item;                /* NULL when the slot is empty */
  GstClockTime deadline;
  gsize size;
  gboolean gone;                /* its seq came after its deadline: never
                                 * released, and not waited for */
} MtcpReorderSlot;

/* A half-open range [first, end) the sender said it will never send. */
typedef struct
{
  guint64 first;
  guint64 end;
} MtcpReorderRange;

/* Storage: a ring of slots indexed by seq - next_seq. Items mostly arrive
 * at or near the tail, so push, duplicate detection and head release are
 * all O(1); the ring doubles (power of two, masked indexing) only when an
 * item lands beyond its capacity, so it never exceeds the window. The
 * lowest held seq and the contiguous run at the head are cached so pop and
 * highest_in_order need no scan in the common case. */
struct _MtcpReorder
{
  guint64 window;
  GDestroyNotify free_item;

  MtcpReorderSlot *slots;
  gsize capacity;               /* power of two */
  gsize head;                   /* index of the slot for next_seq */

  guint64 next_seq;
  /* which of the last HISTORY seqs below next_seq were released or came
   * after they were given up (1), and which were only skipped (0): another
   * copy of a seen one is a duplicate, so a frame counts late once */
  guint8 seen[HISTORY / 8];
  guint64 lowest_held;          /* valid when depth > 0 */
  guint64 run;                  /* held items contiguous from next_seq */
  guint64 run_bytes;            /* and their bytes */
  gboolean discont_pending;     /* seqs skipped since the last release */
  guint64 n_gone;               /* slots marked gone */

  GArray *ranges;               /* MtcpReorderRange, sorted, disjoint and
                                 * not touching, at most MAX_RANGES */

  guint64 max_cost;             /* 0 = no byte cap */
  guint64 cost;                 /* sizes held + ITEM_COST per item */
  gboolean full;                /* a push was refused for the cap */
  GstClockTime horizon;         /* NONE = deadlines unbounded */

  MtcpReorderStats stats;
};

#define MTCP_REORDER_MIN_CAPACITY 16

static inline MtcpReorderSlot *
slot_at (MtcpReorder * reorder, guint64 offset)
{
  return &reorder->slots[(reorder->head + offset) & (reorder->capacity - 1)];
}

MtcpReorder *
mtcp_reorder_new (guint64 window, GDestroyNotify free_item)
{
  static gsize debug_once = 0;
  MtcpReorder *reorder;

  g_return_val_if_fail (window > 0, NULL);
  /* the ring may grow up to the window: keep it addressable */
  g_return_val_if_fail (window <= G_MAXSIZE / 2 / sizeof (MtcpReorderSlot),
      NULL);

  if (g_once_init_enter (&debug_once)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_reorder_debug, "multitcpreorder", 0,
        "multitcp reorder buffer");
    g_once_init_leave (&debug_once, 1);
  }

  reorder = g_new0 (MtcpReorder, 1);
  reorder->window = window;
  reorder->free_item = free_item;
  reorder->capacity = MTCP_REORDER_MIN_CAPACITY;
  reorder->slots = g_new0 (MtcpReorderSlot, reorder->capacity);
  reorder->ranges = g_array_new (FALSE, FALSE, sizeof (MtcpReorderRange));
  reorder->horizon = GST_CLOCK_TIME_NONE;
  return reorder;
}

static void
free_held (MtcpReorder * reorder)
{
  gsize i;

  for (i = 0; i < reorder->capacity; i++) {
    MtcpReorderSlot *slot = &reorder->slots[i];

    if (slot->item != NULL && reorder->free_item != NULL)
      reorder->free_item (slot->item);
    slot->item = NULL;
    slot->gone = FALSE;
  }
  reorder->n_gone = 0;
  reorder->stats.depth = 0;
  reorder->stats.bytes = 0;
  reorder->cost = 0;
  reorder->full = FALSE;
  reorder->run = 0;
  reorder->run_bytes = 0;
}

void
mtcp_reorder_free (MtcpReorder * reorder)
{
  if (reorder == NULL)
    return;
  free_held (reorder);
  g_free (reorder->slots);
  g_array_unref (reorder->ranges);
  g_free (reorder);
}

void
mtcp_reorder_set_limits (MtcpReorder * reorder, guint64 max_bytes,
    GstClockTime horizon)
{
  g_return_if_fail (reorder != NULL);

  reorder->max_cost = max_bytes;
  reorder->horizon = horizon;
}

void
mtcp_reorder_reset (MtcpReorder * reorder, guint64 next_seq)
{
  g_return_if_fail (reorder != NULL);

  GST_DEBUG ("reset: dropping %" G_GUINT64_FORMAT " items, next seq %"
      G_GUINT64_FORMAT, reorder->stats.depth, next_seq);
  free_held (reorder);
  g_array_set_size (reorder->ranges, 0);
  reorder->head = 0;
  reorder->next_seq = next_seq;
  memset (reorder->seen, 0, sizeof (reorder->seen));
  reorder->discont_pending = FALSE;
}

/* Grow the ring so that @offset fits; offsets keep their meaning. */
static void
grow (MtcpReorder * reorder, guint64 offset)
{
  gsize new_capacity = reorder->capacity;
  MtcpReorderSlot *new_slots;
  gsize i;

  while (new_capacity <= offset)
    new_capacity <<= 1;

  new_slots = g_new0 (MtcpReorderSlot, new_capacity);
  for (i = 0; i < reorder->capacity; i++)
    new_slots[i] = *slot_at (reorder, i);
  g_free (reorder->slots);
  reorder->slots = new_slots;
  reorder->capacity = new_capacity;
  reorder->head = 0;
}

static inline void
mark_history (MtcpReorder * reorder, guint64 seq, gboolean seen)
{
  guint64 bit = seq % HISTORY;
  if (seen)
    reorder->seen[bit / 8] |= 1 << (bit % 8);
  else
    reorder->seen[bit / 8] &= ~(1 << (bit % 8));
}

static inline gboolean
was_seen (MtcpReorder * reorder, guint64 seq)
{
  guint64 bit = seq % HISTORY;
  if (reorder->next_seq - seq > HISTORY)
    return FALSE;
  return (reorder->seen[bit / 8] >> (bit % 8)) & 1;
}

MtcpReorderPushResult
mtcp_reorder_push (MtcpReorder * reorder, guint64 seq, GstClockTime deadline,
    GstClockTime now, gsize size, gpointer item)
{
  MtcpReorderSlot *slot;
  guint64 offset;

  g_return_val_if_fail (reorder != NULL, MTCP_REORDER_TOO_FAR);
  /* NULL is pop's "nothing to release" */
  g_return_val_if_fail (item != NULL, MTCP_REORDER_TOO_FAR);

  if (seq < reorder->next_seq && was_seen (reorder, seq)) {
    reorder->stats.duplicates++;
    return MTCP_REORDER_DUPLICATE;
  }
  if (seq < reorder->next_seq) {
    GST_LOG ("seq %" G_GUINT64_FORMAT " late: slot already given up "
        "(next %" G_GUINT64_FORMAT ")", seq, reorder->next_seq);
    /* an older one's bit stands for a newer seq now */
    if (reorder->next_seq - seq <= HISTORY)
      mark_history (reorder, seq, TRUE);
    reorder->stats.late++;
    return MTCP_REORDER_LATE;
  }
  offset = seq - reorder->next_seq;
  if (offset < reorder->capacity && slot_at (reorder, offset)->gone) {
    reorder->stats.duplicates++;
    return MTCP_REORDER_DUPLICATE;
  }
  if (GST_CLOCK_TIME_IS_VALID (deadline) && GST_CLOCK_TIME_IS_VALID (now)
      && now > deadline) {
    GST_LOG ("seq %" G_GUINT64_FORMAT " late: arrived %" GST_STIME_FORMAT
        " after its deadline", seq, GST_STIME_ARGS (GST_CLOCK_DIFF (deadline,
                now)));
    reorder->stats.late++;
    /* the release need not wait for it (after an outage the late ones
     * came first, and the frames in time behind them were held to their
     * own deadline); marked only where the ring reaches, so that late
     * items cannot grow it */
    if (offset < reorder->capacity && slot_at (reorder, offset)->item == NULL) {
      slot_at (reorder, offset)->gone = TRUE;
      reorder->n_gone++;
    }
    return MTCP_REORDER_LATE;
  }

  if (offset < reorder->capacity && slot_at (reorder, offset)->item != NULL) {
    reorder->stats.duplicates++;
    return MTCP_REORDER_DUPLICATE;
  }
  if (offset >= reorder->window) {
    GST_DEBUG ("seq %" G_GUINT64_FORMAT " too far ahead of %" G_GUINT64_FORMAT,
        seq, reorder->next_seq);
    return MTCP_REORDER_TOO_FAR;
  }
  /* the next one in order is released by the next pop: taking it can only
   * make room, refusing it could keep everything waiting behind its gap */
  if (reorder->max_cost > 0 && offset > 0 &&
      (reorder->cost >= reorder->max_cost ||
          (guint64) size + MTCP_REORDER_ITEM_COST >
          reorder->max_cost - reorder->cost)) {
    if (!reorder->full)
      GST_DEBUG ("over the cap of %" G_GUINT64_FORMAT " bytes: refusing seq %"
          G_GUINT64_FORMAT " and giving up on gaps", reorder->max_cost, seq);
    reorder->stats.overflow++;
    reorder->full = TRUE;
    return MTCP_REORDER_FULL;
  }
  /* now <= deadline here: no overflow in now + horizon */
  if (GST_CLOCK_TIME_IS_VALID (deadline) && GST_CLOCK_TIME_IS_VALID (now) &&
      GST_CLOCK_TIME_IS_VALID (reorder->horizon) &&
      deadline - now > reorder->horizon) {
    GST_LOG ("seq %" G_GUINT64_FORMAT " deadline %" GST_TIME_FORMAT " ahead, "
        "pulled in", seq, GST_TIME_ARGS (deadline - now));
    deadline = now + reorder->horizon;
    reorder->stats.clamped++;
  }

  if (offset >= reorder->capacity)
    grow (reorder, offset);

  slot = slot_at (reorder, offset);
  slot->item = item;
  slot->deadline = deadline;
  slot->size = size;

  if (reorder->stats.depth == 0 || seq < reorder->lowest_held)
    reorder->lowest_held = seq;
  reorder->stats.depth++;
  reorder->stats.bytes += size;
  reorder->cost += size + MTCP_REORDER_ITEM_COST;

  /* extend the contiguous run at the head; amortised O(1) */
  if (offset == reorder->run) {
    reorder->run_bytes += size;
    reorder->run++;
    while (reorder->run < reorder->capacity
        && slot_at (reorder, reorder->run)->item != NULL) {
      reorder->run_bytes += slot_at (reorder, reorder->run)->size;
      reorder->run++;
    }
  }

  return MTCP_REORDER_ACCEPTED;
}

/* Index of the first range ending at or after @seq: every range before it
 * lies wholly below @seq and does not touch it. Ends are sorted because the
 * ranges are. No lock (the owner serialises calls). */
static guint
first_range_reaching (MtcpReorder * reorder, guint64 seq)
{
  const MtcpReorderRange *ranges =
      (const MtcpReorderRange *) reorder->ranges->data;
  guint lo = 0, hi = reorder->ranges->len;

  while (lo < hi) {
    guint mid = lo + (hi - lo) / 2;
    if (ranges[mid].end < seq)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

gboolean
mtcp_reorder_skip_range (MtcpReorder * reorder, guint64 first, guint64 end)
{
  MtcpReorderRange range;
  MtcpReorderRange *ranges;
  guint lo, hi, len;

  g_return_val_if_fail (reorder != NULL, FALSE);

  GST_LOG ("sender skips [%" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")",
      first, end);
  /* already released slots need nothing */
  if (end <= first || end <= reorder->next_seq)
    return TRUE;
  first = MAX (first, reorder->next_seq);
  if (first - reorder->next_seq >= reorder->window) {
    GST_DEBUG ("skip from %" G_GUINT64_FORMAT " too far ahead of %"
        G_GUINT64_FORMAT, first, reorder->next_seq);
    return FALSE;
  }

  /* the ranges that overlap or touch [first, end) are [lo, hi) */
  lo = first_range_reaching (reorder, first);
  ranges = (MtcpReorderRange *) reorder->ranges->data;
  len = reorder->ranges->len;
  hi = lo;
  while (hi < len && ranges[hi].first <= end)
    hi++;
  if (hi == lo) {
    range.first = first;
    range.end = end;
    g_array_insert_val (reorder->ranges, lo, range);
  } else {
    /* hi - lo ranges become one: amortised over the inserts that made them */
    ranges[lo].first = MIN (ranges[lo].first, first);
    ranges[lo].end = MAX (ranges[hi - 1].end, end);
    if (hi - lo > 1)
      g_array_remove_range (reorder->ranges, lo + 1, hi - lo - 1);
  }

  if (reorder->ranges->len > MTCP_REORDER_MAX_RANGES) {
    /* forgetting the range furthest ahead loses nothing but time: its seqs
     * are given up at a deadline instead of at once */
    MtcpReorderRange *last = &g_array_index (reorder->ranges,
        MtcpReorderRange, reorder->ranges->len - 1);
    GST_DEBUG ("more than %u skip ranges: forgetting [%" G_GUINT64_FORMAT
        ", %" G_GUINT64_FORMAT ")", MTCP_REORDER_MAX_RANGES, last->first,
        last->end);
    g_array_set_size (reorder->ranges, reorder->ranges->len - 1);
    reorder->stats.ranges_dropped++;
    return FALSE;
  }
  return TRUE;
}

guint
mtcp_reorder_n_ranges (MtcpReorder * reorder)
{
  g_return_val_if_fail (reorder != NULL, 0);

  return reorder->ranges->len;
}

/* Move next_seq forward over @count empty slots (those that came late
 * stay seen: another copy is a duplicate). */
static void
advance (MtcpReorder * reorder, guint64 count)
{
  guint64 i;

  if (count >= HISTORY)
    memset (reorder->seen, 0, sizeof (reorder->seen));
  else
    for (i = 0; i < count; i++)
      mark_history (reorder, reorder->next_seq + i, FALSE);
  for (i = 0; reorder->n_gone > 0 && i < MIN (count,
          (guint64) reorder->capacity); i++) {
    MtcpReorderSlot *slot = slot_at (reorder, i);
    if (slot->gone) {
      slot->gone = FALSE;
      reorder->n_gone--;
      /* the seqs passed that the history still reaches */
      if (count - i <= HISTORY)
        mark_history (reorder, reorder->next_seq + i, TRUE);
    }
  }
  reorder->head = (reorder->head + count) & (reorder->capacity - 1);
  reorder->next_seq += count;
  reorder->discont_pending = TRUE;
  /* the run now starts at the new head: what the receiver acknowledges */
  reorder->run = 0;
  reorder->run_bytes = 0;
  while (reorder->run < reorder->capacity &&
      slot_at (reorder, reorder->run)->item != NULL) {
    reorder->run_bytes += slot_at (reorder, reorder->run)->size;
    reorder->run++;
  }
}

/* Lowest held seq after releasing the head item. */
static void
find_lowest_held (MtcpReorder * reorder)
{
  guint64 offset = 0;

  if (reorder->stats.depth == 0)
    return;
  while (slot_at (reorder, offset)->item == NULL)
    offset++;
  reorder->lowest_held = reorder->next_seq + offset;
}

gpointer
mtcp_reorder_pop (MtcpReorder * reorder, GstClockTime now, guint64 * seq,
    gboolean * discont, GstClockTime * wake_at)
{
  g_return_val_if_fail (reorder != NULL, NULL);

  if (wake_at)
    *wake_at = GST_CLOCK_TIME_NONE;
  if (discont)
    *discont = FALSE;

  for (;;) {
    MtcpReorderRange *range = NULL;
    gboolean held = reorder->stats.depth > 0;
    MtcpReorderSlot *slot;
    guint passed = 0;

    /* drop ranges the release has passed, in one move */
    while (passed < reorder->ranges->len && g_array_index (reorder->ranges,
            MtcpReorderRange, passed).end <= reorder->next_seq)
      passed++;
    if (passed > 0)
      g_array_remove_range (reorder->ranges, 0, passed);
    if (reorder->full && reorder->cost <= reorder->max_cost / 2)
      reorder->full = FALSE;
    if (reorder->ranges->len > 0)
      range = &g_array_index (reorder->ranges, MtcpReorderRange, 0);

    if (held && reorder->lowest_held == reorder->next_seq) {
      gpointer item;

      slot = slot_at (reorder, 0);
      item = slot->item;
      slot->item = NULL;
      reorder->stats.depth--;
      reorder->stats.bytes -= slot->size;
      reorder->cost -= slot->size + MTCP_REORDER_ITEM_COST;
      reorder->stats.released++;
      reorder->run--;
      reorder->run_bytes -= slot->size;

      if (seq)
        *seq = reorder->next_seq;
      if (discont)
        *discont = reorder->discont_pending;
      reorder->discont_pending = FALSE;
      reorder->head = (reorder->head + 1) & (reorder->capacity - 1);
      mark_history (reorder, reorder->next_seq, TRUE);
      reorder->next_seq++;
      find_lowest_held (reorder);
      return item;
    }

    if (range != NULL && range->first <= reorder->next_seq) {
      /* held items inside the range (resent frames) are still released */
      guint64 target = range->end;
      guint64 count;

      if (held && reorder->lowest_held < target)
        target = reorder->lowest_held;
      count = target - reorder->next_seq;
      GST_DEBUG ("sender skipped %" G_GUINT64_FORMAT " seqs [%"
          G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT ")", count,
          reorder->next_seq, target);
      reorder->stats.sender_skipped += count;
      advance (reorder, count);
      continue;
    }

    if (slot_at (reorder, 0)->gone) {
      /* came late: nothing to wait for (given up, as at a deadline; in a
       * sender's range the range counts it) */
      guint64 count = 1;
      while (count < reorder->capacity && slot_at (reorder, count)->gone)
        count++;
      GST_DEBUG ("%" G_GUINT64_FORMAT " seqs from %" G_GUINT64_FORMAT
          " came late: given up", count, reorder->next_seq);
      reorder->stats.skipped += count;
      advance (reorder, count);
      continue;
    }

    if (!held)
      return NULL;

    slot = slot_at (reorder, reorder->lowest_held - reorder->next_seq);
    /* over the byte cap, waiting for the gap would only refuse more */
    if (reorder->full || (GST_CLOCK_TIME_IS_VALID (slot->deadline)
            && GST_CLOCK_TIME_IS_VALID (now) && now >= slot->deadline)) {
      /* stop at a sender range so its seqs are counted as sender_skipped */
      guint64 target = reorder->lowest_held;
      guint64 count;

      if (range != NULL && range->first < target)
        target = range->first;
      count = target - reorder->next_seq;
      GST_DEBUG ("gave up on %" G_GUINT64_FORMAT " seqs [%" G_GUINT64_FORMAT
          ", %" G_GUINT64_FORMAT ") at deadline %" GST_TIME_FORMAT, count,
          reorder->next_seq, target, GST_TIME_ARGS (slot->deadline));
      reorder->stats.skipped += count;
      advance (reorder, count);
      continue;
    }

    if (wake_at)
      *wake_at = slot->deadline;
    return NULL;
  }
}

gboolean
mtcp_reorder_late_unblocks (MtcpReorder * reorder)
{
  g_return_val_if_fail (reorder != NULL, FALSE);

  return reorder->stats.depth > 0 && slot_at (reorder, 0)->gone;
}

guint64
mtcp_reorder_highest_in_order (MtcpReorder * reorder)
{
  g_return_val_if_fail (reorder != NULL, G_MAXUINT64);

  /* wraps to G_MAXUINT64 when next_seq == 0 and nothing is held there */
  return reorder->next_seq + reorder->run - 1;
}

guint64
mtcp_reorder_in_order_bytes (MtcpReorder * reorder)
{
  g_return_val_if_fail (reorder != NULL, 0);
  return reorder->run_bytes;
}

void
mtcp_reorder_get_stats (MtcpReorder * reorder, MtcpReorderStats * stats)
{
  g_return_if_fail (reorder != NULL);
  g_return_if_fail (stats != NULL);

  *stats = reorder->stats;
  stats->next_seq = reorder->next_seq;
}

GstClockTime
mtcp_reorder_first_deadline (MtcpReorder * reorder)
{
  g_return_val_if_fail (reorder != NULL, GST_CLOCK_TIME_NONE);

  if (reorder->stats.depth == 0)
    return GST_CLOCK_TIME_NONE;
  return slot_at (reorder, reorder->lowest_held - reorder->next_seq)->deadline;
}
