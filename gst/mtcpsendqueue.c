/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpsendqueue.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_queue_debug);
#define GST_CAT_DEFAULT mtcp_queue_debug

typedef enum {
  ENTRY_BUFFER,
  ENTRY_CAPS,
  ENTRY_EOS,
} EntryKind;

typedef struct {
  EntryKind kind;
  GstBuffer *buffer;
  GstCaps *caps;
  GstClockTime pts, dts, duration;
  GstClockTime time;            /* pts, else dts: what lag is measured in */
  guint32 wire_flags;
  gboolean keyframe;
  gsize size;
  guint64 bytes_before;         /* payload bytes pushed before this entry */
} Entry;

struct _MtcpQueueSession {
  guint64 cursor;               /* index of the next entry to hand out */
  gint64 seq_offset;            /* session seq = index + seq_offset */
  GQueue pending;               /* MtcpOutFrame to hand out before the cursor */
  gboolean awaiting_keyframe;   /* drop delta buffers until a keyframe comes */
  guint64 resync_until;         /* drop delta buffers below this index */
  GHashTable *taken;            /* static lanes: indices > cursor handed out */
  GstClockTime max_lag_time;    /* its receiver's latency, NONE: not said */
  GstClockTime transit;         /* to the receiver from here, beyond the
                                 * first buffer's, on its fastest connection */
  gboolean keep_timely;         /* skip to the first keyframe in time */
  gint64 anchor_us;             /* when its first buffer was handed out */
  GstClockTime anchor_time;     /* and that buffer's time; NONE: not yet */
  MtcpQueueSessionStats stats;
};

struct _MtcpSendQueue {
  MtcpSendQueueLimits limits;
  GPtrArray *entries;           /* Entry*, live ones from entries[start] */
  guint start;
  guint64 first_index;          /* index of entries[start] */
  guint64 bytes_pushed;         /* payload bytes ever pushed */
  guint64 bytes_held;
  guint64 latest_keyframe;      /* index, G_MAXUINT64 if none held */
  GstClockTime last_time;
  GstCaps *caps_before_first;   /* caps in force at first_index */
  GPtrArray *headers;           /* latest run of HEADER buffers */
  guint64 headers_end;          /* index after the last of them */
  gboolean last_was_header;
  GList *sessions;
  MtcpSendQueueClock clock;     /* monotonic microseconds */
};

#define NO_INDEX G_MAXUINT64

static void
entry_free (Entry * e)
{
  if (e == NULL)
    return;                     /* trimmed slot at the dead front of the array */
  gst_clear_buffer (&e->buffer);
  gst_clear_caps (&e->caps);
  g_free (e);
}

static inline guint64
queue_end (MtcpSendQueue * q)
{
  return q->first_index + (q->entries->len - q->start);
}

static inline Entry *
entry_at (MtcpSendQueue * q, guint64 index)
{
  return g_ptr_array_index (q->entries, q->start + (index - q->first_index));
}

MtcpSendQueue *
mtcp_send_queue_new (const MtcpSendQueueLimits * limits)
{
  MtcpSendQueue *q = g_new0 (MtcpSendQueue, 1);
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_queue_debug, "multitcpqueue", 0,
        "multitcp shared send queue");
    g_once_init_leave (&done, 1);
  }
  q->limits = *limits;
  q->clock = g_get_monotonic_time;
  q->entries = g_ptr_array_new_with_free_func ((GDestroyNotify) entry_free);
  q->headers = g_ptr_array_new_with_free_func ((GDestroyNotify)
      gst_buffer_unref);
  q->latest_keyframe = NO_INDEX;
  q->last_time = GST_CLOCK_TIME_NONE;
  return q;
}

static void
session_free (MtcpQueueSession * s)
{
  g_queue_clear_full (&s->pending, (GDestroyNotify) mtcp_out_frame_free);
  g_hash_table_unref (s->taken);
  g_free (s);
}

void
mtcp_send_queue_free (MtcpSendQueue * q)
{
  g_list_free_full (q->sessions, (GDestroyNotify) session_free);
  g_ptr_array_unref (q->entries);
  g_ptr_array_unref (q->headers);
  gst_clear_caps (&q->caps_before_first);
  g_free (q);
}

void
mtcp_send_queue_set_limits (MtcpSendQueue * q,
    const MtcpSendQueueLimits * limits)
{
  q->limits = *limits;
}

const gchar *
mtcp_scheduler_nick (MtcpScheduler scheduler)
{
  switch (scheduler) {
    case MTCP_SCHEDULER_DYNAMIC:
      return "dynamic";
    case MTCP_SCHEDULER_ROUND_ROBIN:
      return "round-robin";
    case MTCP_SCHEDULER_STATIC:
      return "static";
  }
  return "unknown";
}

/* ---- frames ---- */

static MtcpOutFrame *
frame_for_entry (Entry * e, guint64 seq)
{
  MtcpOutFrame *f = mtcp_out_frame_new ();

  f->seq = seq;
  switch (e->kind) {
    case ENTRY_BUFFER:{
      MtcpBufferInfo *info = &f->info;

      info->seq = seq;
      info->pts = GST_CLOCK_TIME_IS_VALID (e->pts) ? e->pts : MTCP_TIME_NONE;
      info->dts = GST_CLOCK_TIME_IS_VALID (e->dts) ? e->dts : MTCP_TIME_NONE;
      info->duration = GST_CLOCK_TIME_IS_VALID (e->duration) ?
          e->duration : MTCP_TIME_NONE;
      info->flags = e->wire_flags;
      info->payload_size = e->size;
      f->type = MTCP_FRAME_BUFFER;
      /* the plain head until a connection writes its own */
      f->head_size = mtcp_write_buffer_head (f->head,
          sizeof (f->head_inline), info);
      f->payload = gst_buffer_ref (e->buffer);
      break;
    }
    case ENTRY_CAPS:{
      gchar *str = gst_caps_to_string (e->caps);
      gsize cap = MTCP_HEADER_SIZE + 8 + strlen (str);
      guint8 *head = mtcp_out_frame_alloc_head (f, cap);

      f->type = MTCP_FRAME_CAPS;
      f->head_size = mtcp_write_caps (head, cap, seq, str);
      if (f->head_size == 0)
        GST_WARNING ("caps too large to send (%" G_GSIZE_FORMAT " bytes)", cap);
      g_free (str);
      break;
    }
    case ENTRY_EOS:
      f->type = MTCP_FRAME_EOS;
      f->head_size = mtcp_write_eos (f->head, sizeof (f->head_inline), seq);
      break;
  }
  return f;
}

static MtcpOutFrame *
frame_for_skip (guint64 first, guint64 end)
{
  MtcpOutFrame *f = mtcp_out_frame_new ();
  MtcpSkip skip = { first, end };

  f->type = MTCP_FRAME_SKIP;
  f->seq = first;
  f->head_size = mtcp_write_skip (f->head, sizeof (f->head_inline), &skip);
  return f;
}

/* A preamble buffer: stream header, no timestamps. */
static MtcpOutFrame *
frame_for_header (GstBuffer * buf, guint64 seq)
{
  Entry e = { 0, };

  e.kind = ENTRY_BUFFER;
  e.buffer = buf;
  e.pts = e.dts = e.duration = GST_CLOCK_TIME_NONE;
  e.wire_flags = MTCP_BUF_HEADER;
  e.size = gst_buffer_get_size (buf);
  return frame_for_entry (&e, seq);
}

/* ---- producer ---- */

static void
trim (MtcpSendQueue * q)
{
  guint64 end = queue_end (q);
  guint64 keep = end;
  GList *l;

  for (l = q->sessions; l; l = l->next) {
    MtcpQueueSession *s = l->data;
    keep = MIN (keep, s->cursor);
  }
  /* keep the latest keyframe for joiners while it is within the byte bound */
  if (q->latest_keyframe != NO_INDEX && q->latest_keyframe < keep) {
    guint64 gop_bytes = q->bytes_pushed -
        entry_at (q, q->latest_keyframe)->bytes_before;
    if (q->limits.max_lag_bytes == 0 || gop_bytes <= q->limits.max_lag_bytes)
      keep = q->latest_keyframe;
  }

  while (q->first_index < keep) {
    Entry *e = g_ptr_array_index (q->entries, q->start);
    if (e->kind == ENTRY_CAPS)
      gst_caps_replace (&q->caps_before_first, e->caps);
    if (e->kind == ENTRY_BUFFER)
      q->bytes_held -= e->size;
    if (q->latest_keyframe == q->first_index)
      q->latest_keyframe = NO_INDEX;
    entry_free (e);
    g_ptr_array_index (q->entries, q->start) = NULL;
    q->start++;
    q->first_index++;
  }
  /* compact the array once its dead front outweighs its live part */
  if (q->start > 256 && q->start > q->entries->len / 2) {
    g_ptr_array_remove_range (q->entries, 0, q->start);
    q->start = 0;
  }
}

static void
push_entry (MtcpSendQueue * q, Entry * e)
{
  guint64 index = queue_end (q);

  e->bytes_before = q->bytes_pushed;
  if (e->kind == ENTRY_BUFFER) {
    q->bytes_pushed += e->size;
    q->bytes_held += e->size;
  }
  g_ptr_array_add (q->entries, e);

  if (e->keyframe) {
    GList *l;
    q->latest_keyframe = index;
    for (l = q->sessions; l; l = l->next) {
      MtcpQueueSession *s = l->data;
      if (s->awaiting_keyframe) {
        s->awaiting_keyframe = FALSE;
        s->resync_until = index;
      }
    }
  }
  trim (q);
}

void
mtcp_send_queue_push_caps (MtcpSendQueue * q, GstCaps * caps)
{
  Entry *e = g_new0 (Entry, 1);
  e->kind = ENTRY_CAPS;
  e->caps = gst_caps_ref (caps);
  e->pts = e->dts = e->duration = e->time = GST_CLOCK_TIME_NONE;
  GST_DEBUG ("caps at index %" G_GUINT64_FORMAT ": %" GST_PTR_FORMAT,
      queue_end (q), caps);
  push_entry (q, e);
}

void
mtcp_send_queue_push_buffer (MtcpSendQueue * q, GstBuffer * buffer,
    GstClockTime pts, GstClockTime dts, GstClockTime duration)
{
  Entry *e = g_new0 (Entry, 1);
  /* a stream header proper (matroska, ogg) has no time; h264parse also
   * flags keyframes that carry SPS/PPS as HEADER, and those are keyframes */
  gboolean header = GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_HEADER) &&
      !GST_CLOCK_TIME_IS_VALID (pts) && !GST_CLOCK_TIME_IS_VALID (dts);

  e->kind = ENTRY_BUFFER;
  e->buffer = gst_buffer_ref (buffer);
  e->pts = pts;
  e->dts = dts;
  e->duration = duration;
  e->time = GST_CLOCK_TIME_IS_VALID (pts) ? pts : dts;
  e->wire_flags = mtcp_buffer_flags_to_wire (GST_BUFFER_FLAGS (buffer));
  e->size = gst_buffer_get_size (buffer);
  e->keyframe = !header &&
      !GST_BUFFER_FLAG_IS_SET (buffer, GST_BUFFER_FLAG_DELTA_UNIT);
  if (GST_CLOCK_TIME_IS_VALID (e->time))
    q->last_time = e->time;

  if (header) {
    /* a new run of headers replaces the one joiners would get */
    if (!q->last_was_header)
      g_ptr_array_set_size (q->headers, 0);
    g_ptr_array_add (q->headers, gst_buffer_ref (buffer));
    q->headers_end = queue_end (q) + 1;
  }
  q->last_was_header = header;
  push_entry (q, e);
}

void
mtcp_send_queue_push_eos (MtcpSendQueue * q)
{
  Entry *e = g_new0 (Entry, 1);
  e->kind = ENTRY_EOS;
  e->pts = e->dts = e->duration = e->time = GST_CLOCK_TIME_NONE;
  push_entry (q, e);
}

guint64
mtcp_send_queue_get_bytes (MtcpSendQueue * q)
{
  return q->bytes_held;
}

guint64
mtcp_send_queue_get_length (MtcpSendQueue * q)
{
  return queue_end (q) - q->first_index;
}

guint64
mtcp_send_queue_get_total_pushed (MtcpSendQueue * q)
{
  return q->bytes_pushed;
}

/* ---- sessions ---- */

static GstCaps *
caps_in_force_at (MtcpSendQueue * q, guint64 index)
{
  guint64 i;
  for (i = index; i > q->first_index; i--) {
    Entry *e = entry_at (q, i - 1);
    if (e->kind == ENTRY_CAPS)
      return e->caps;
  }
  return q->caps_before_first;
}

MtcpQueueSession *
mtcp_send_queue_add_session (MtcpSendQueue * q)
{
  return mtcp_send_queue_add_session_within (q, G_MAXUINT64);
}

MtcpQueueSession *
mtcp_send_queue_add_session_within (MtcpSendQueue * q, guint64 max_backlog)
{
  MtcpQueueSession *s = g_new0 (MtcpQueueSession, 1);
  guint64 start;
  GstCaps *caps;
  guint64 seq = 0;

  g_queue_init (&s->pending);
  s->taken = g_hash_table_new_full (g_int64_hash, g_int64_equal, g_free, NULL);
  s->max_lag_time = GST_CLOCK_TIME_NONE;
  s->anchor_time = GST_CLOCK_TIME_NONE;

  if (q->latest_keyframe != NO_INDEX && q->bytes_pushed -
      entry_at (q, q->latest_keyframe)->bytes_before <= max_backlog) {
    start = q->latest_keyframe;
  } else {
    start = queue_end (q);
    s->awaiting_keyframe = TRUE;
  }

  caps = caps_in_force_at (q, start);
  if (caps) {
    Entry e = { 0, };
    const GstStructure *st = gst_caps_get_structure (caps, 0);
    const GValue *sh = st ? gst_structure_get_value (st, "streamheader") : NULL;

    e.kind = ENTRY_CAPS;
    e.caps = caps;
    g_queue_push_tail (&s->pending, frame_for_entry (&e, seq++));

    if (sh && GST_VALUE_HOLDS_ARRAY (sh)) {
      guint i;
      for (i = 0; i < gst_value_array_get_size (sh); i++) {
        const GValue *v = gst_value_array_get_value (sh, i);
        if (G_VALUE_HOLDS (v, GST_TYPE_BUFFER))
          g_queue_push_tail (&s->pending,
              frame_for_header (g_value_get_boxed (v), seq++));
      }
    } else if (q->headers->len > 0 && q->headers_end <= start) {
      /* in-band headers seen before the start point */
      guint i;
      for (i = 0; i < q->headers->len; i++)
        g_queue_push_tail (&s->pending,
            frame_for_header (g_ptr_array_index (q->headers, i), seq++));
    }
  }
  s->cursor = start;
  s->seq_offset = (gint64) seq - (gint64) start;
  q->sessions = g_list_append (q->sessions, s);
  GST_DEBUG ("session %p starts at index %" G_GUINT64_FORMAT " after %"
      G_GUINT64_FORMAT " preamble frames%s", s, start, seq,
      s->awaiting_keyframe ? ", waiting for a keyframe" : "");
  return s;
}

void
mtcp_send_queue_remove_session (MtcpSendQueue * q, MtcpQueueSession * s)
{
  q->sessions = g_list_remove (q->sessions, s);
  session_free (s);
  trim (q);
}

static inline guint64
seq_of (MtcpQueueSession * s, guint64 index)
{
  return (guint64) ((gint64) index + s->seq_offset);
}

static inline gboolean
entry_dropped_for (MtcpQueueSession * s, Entry * e, guint64 index)
{
  if (e->kind != ENTRY_BUFFER || e->keyframe ||
      (e->wire_flags & MTCP_BUF_HEADER))
    return FALSE;
  return s->awaiting_keyframe || index < s->resync_until;
}

static void
count_drop (MtcpQueueSession * s, Entry * e)
{
  s->stats.buffers_dropped++;
  s->stats.bytes_dropped += e->size;
}

static void
count_sent (MtcpQueueSession * s, MtcpOutFrame * f)
{
  if (f->type == MTCP_FRAME_BUFFER && !f->resend) {
    s->stats.buffers_sent++;
    s->stats.bytes_sent += gst_buffer_get_size (f->payload);
  }
  s->stats.next_seq = MAX (s->stats.next_seq, f->seq + 1);
}

static void
advance_cursor (MtcpQueueSession * s)
{
  s->cursor++;
  while (g_hash_table_size (s->taken) > 0 &&
      g_hash_table_remove (s->taken, &s->cursor))
    s->cursor++;
}

static void
mark_taken (MtcpQueueSession * s, guint64 index)
{
  if (index == s->cursor) {
    advance_cursor (s);
  } else {
    guint64 *key = g_new (guint64, 1);
    *key = index;
    g_hash_table_add (s->taken, key);
  }
}

/* Also gives @f its due time: when, by the receiver's clock mapped onto
 * ours, the buffer is due, before the receiver's latency is added. */
static void
note_handed_out (MtcpSendQueue * q, MtcpQueueSession * s, Entry * e,
    MtcpOutFrame * f)
{
  /* the receiver maps its clock on the first buffer that arrives */
  if (GST_CLOCK_TIME_IS_VALID (s->max_lag_time) &&
      !GST_CLOCK_TIME_IS_VALID (s->anchor_time) && e->kind == ENTRY_BUFFER &&
      GST_CLOCK_TIME_IS_VALID (e->time)) {
    s->anchor_us = q->clock ();
    s->anchor_time = e->time;
    GST_DEBUG ("session %p: deadlines from time %" GST_TIME_FORMAT
        " handed out at %" G_GINT64_FORMAT " us", s,
        GST_TIME_ARGS (s->anchor_time), s->anchor_us);
  }
  if (GST_CLOCK_TIME_IS_VALID (s->anchor_time) && e->kind == ENTRY_BUFFER &&
      GST_CLOCK_TIME_IS_VALID (e->time))
    f->due_us = s->anchor_us + GST_CLOCK_DIFF (s->anchor_time,
        e->time) / GST_USECOND;
}

MtcpOutFrame *
mtcp_send_queue_take (MtcpSendQueue * q, MtcpQueueSession * s)
{
  guint64 end = queue_end (q);
  guint64 run_first = 0, run_len = 0;
  MtcpOutFrame *f;

  if (!g_queue_is_empty (&s->pending)) {
    f = g_queue_pop_head (&s->pending);
    count_sent (s, f);
    return f;
  }
  while (s->cursor < end) {
    guint64 index = s->cursor;
    Entry *e = entry_at (q, index);

    if (g_hash_table_contains (s->taken, &index)) {
      advance_cursor (s);
      continue;
    }
    if (entry_dropped_for (s, e, index)) {
      if (run_len == 0)
        run_first = seq_of (s, index);
      run_len++;
      count_drop (s, e);
      advance_cursor (s);
      continue;
    }
    if (run_len > 0)
      break;                    /* tell the receiver about the run first */
    advance_cursor (s);
    f = frame_for_entry (e, seq_of (s, index));
    count_sent (s, f);
    note_handed_out (q, s, e, f);
    return f;
  }
  if (run_len > 0) {
    GST_LOG ("session %p: skip %" G_GUINT64_FORMAT " frames from seq %"
        G_GUINT64_FORMAT " while resyncing", s, run_len, run_first);
    return frame_for_skip (run_first, run_first + run_len);
  }
  trim (q);
  return NULL;
}

MtcpOutFrame *
mtcp_send_queue_take_lane (MtcpSendQueue * q, MtcpQueueSession * s,
    guint lane, guint n_lanes)
{
  guint64 end = queue_end (q);
  guint64 index, seq;
  Entry *e;
  MtcpOutFrame *f;

  g_return_val_if_fail (n_lanes > 0 && lane < n_lanes, NULL);
  if (!g_queue_is_empty (&s->pending)) {
    f = g_queue_pop_head (&s->pending);
    count_sent (s, f);
    return f;
  }
  if (s->cursor >= end)
    return NULL;
  seq = seq_of (s, s->cursor);
  index = s->cursor + (lane + n_lanes - (guint) (seq % n_lanes)) % n_lanes;
  while (index < end && g_hash_table_contains (s->taken, &index))
    index += n_lanes;
  if (index >= end)
    return NULL;

  e = entry_at (q, index);
  seq = seq_of (s, index);
  mark_taken (s, index);
  if (entry_dropped_for (s, e, index)) {
    count_drop (s, e);
    f = frame_for_skip (seq, seq + 1);
  } else {
    f = frame_for_entry (e, seq);
    count_sent (s, f);
    note_handed_out (q, s, e, f);
  }
  if (index == s->cursor || s->cursor >= end)
    trim (q);
  return f;
}

static gint
compare_seq (gconstpointer a, gconstpointer b, gpointer user_data)
{
  const MtcpOutFrame *fa = a, *fb = b;
  return fa->seq < fb->seq ? -1 : fa->seq > fb->seq ? 1 : 0;
}

void
mtcp_send_queue_requeue (MtcpSendQueue * q, MtcpQueueSession * s,
    GList * frames)
{
  GList *l;

  for (l = frames; l; l = l->next) {
    MtcpOutFrame *f = l->data;
    f->resend = TRUE;
    s->stats.frames_resent++;
    g_queue_insert_sorted (&s->pending, f, compare_seq, NULL);
  }
  GST_DEBUG ("session %p: %u frames to send again", s, g_list_length (frames));
  g_list_free (frames);
}

gboolean
mtcp_send_queue_has_pending (MtcpSendQueue * q, MtcpQueueSession * s)
{
  return !g_queue_is_empty (&s->pending) || s->cursor < queue_end (q);
}

static guint64
session_backlog_bytes (MtcpSendQueue * q, MtcpQueueSession * s)
{
  if (s->cursor >= queue_end (q))
    return 0;
  return q->bytes_pushed - entry_at (q, s->cursor)->bytes_before;
}

/* Time of the first timed entry the session has yet to hand out. */
static GstClockTime
session_next_time (MtcpSendQueue * q, MtcpQueueSession * s)
{
  guint64 i, end = queue_end (q);

  for (i = s->cursor; i < end; i++) {
    Entry *e = entry_at (q, i);
    if (GST_CLOCK_TIME_IS_VALID (e->time))
      return e->time;
  }
  return GST_CLOCK_TIME_NONE;
}

static GstClockTime
session_backlog_time (MtcpSendQueue * q, MtcpQueueSession * s)
{
  GstClockTime next;

  if (!GST_CLOCK_TIME_IS_VALID (q->last_time))
    return 0;
  next = session_next_time (q, s);
  if (!GST_CLOCK_TIME_IS_VALID (next))
    return 0;
  return q->last_time > next ? q->last_time - next : 0;
}

void
mtcp_send_queue_set_clock (MtcpSendQueue * q, MtcpSendQueueClock clock)
{
  q->clock = clock;
}

void
mtcp_send_queue_session_set_max_lag (MtcpSendQueue * q, MtcpQueueSession * s,
    GstClockTime max_lag)
{
  s->max_lag_time = max_lag;
}

void
mtcp_send_queue_session_keep_timely (MtcpSendQueue * q, MtcpQueueSession * s,
    gboolean keep_timely)
{
  s->keep_timely = keep_timely;
}

void
mtcp_send_queue_session_set_transit (MtcpSendQueue * q, MtcpQueueSession * s,
    GstClockTime transit)
{
  s->transit = GST_CLOCK_TIME_IS_VALID (transit) ? transit : 0;
}

/* How late the next buffer the session hands out is, by the receiver's
 * reckoning: its clock maps the first buffer's time to when it arrived, so
 * a buffer is due at anchor + (its time - the first's) + latency. (What
 * is already in sockets is theirs: one stuck frame must not throw away the
 * ones flowing past it on other connections.) */
static GstClockTime
session_late_by (MtcpSendQueue * q, MtcpQueueSession * s)
{
  GstClockTime next, elapsed, span;

  if (!GST_CLOCK_TIME_IS_VALID (s->anchor_time))
    return 0;                   /* nothing arrived: nothing can be late */
  next = session_next_time (q, s);
  if (!GST_CLOCK_TIME_IS_VALID (next) || next < s->anchor_time)
    return 0;
  elapsed = (GstClockTime) MAX (q->clock () - s->anchor_us, 0) * GST_USECOND;
  span = next - s->anchor_time;
  return elapsed > span ? elapsed - span : 0;
}

GstClockTime
mtcp_send_queue_session_late_by (MtcpSendQueue * q, MtcpQueueSession * s)
{
  return session_late_by (q, s);
}

static gboolean
session_over_limits (MtcpSendQueue * q, MtcpQueueSession * s, gboolean own)
{
  if (q->limits.max_lag_bytes > 0 &&
      session_backlog_bytes (q, s) > q->limits.max_lag_bytes)
    return TRUE;
  if (GST_CLOCK_TIME_IS_VALID (q->limits.max_lag_time) &&
      session_backlog_time (q, s) > q->limits.max_lag_time)
    return TRUE;
  if (own && GST_CLOCK_TIME_IS_VALID (s->max_lag_time) &&
      session_late_by (q, s) > s->max_lag_time - MIN (s->transit,
          s->max_lag_time))
    return TRUE;
  return FALSE;
}

/* Jump the cursor to @target: buffers in between are dropped (announced by
 * SKIP frames), caps and EOS in between are still delivered in order. */
static void
session_skip_to (MtcpSendQueue * q, MtcpQueueSession * s, guint64 target)
{
  guint64 run_first = 0, run_len = 0, index;

  for (index = s->cursor; index < target; index++) {
    Entry *e;

    if (g_hash_table_contains (s->taken, &index))
      continue;
    e = entry_at (q, index);
    if (e->kind == ENTRY_BUFFER) {
      if (run_len > 0 && run_first + run_len != seq_of (s, index)) {
        g_queue_push_tail (&s->pending, frame_for_skip (run_first,
                run_first + run_len));
        run_len = 0;
      }
      if (run_len == 0)
        run_first = seq_of (s, index);
      run_len++;
      count_drop (s, e);
      continue;
    }
    if (run_len > 0)
      g_queue_push_tail (&s->pending, frame_for_skip (run_first,
              run_first + run_len));
    run_len = 0;
    g_queue_push_tail (&s->pending, frame_for_entry (e, seq_of (s, index)));
  }
  if (run_len > 0)
    g_queue_push_tail (&s->pending, frame_for_skip (run_first,
            run_first + run_len));

  s->cursor = target;
  {
    GHashTableIter it;
    gpointer key;
    g_hash_table_iter_init (&it, s->taken);
    while (g_hash_table_iter_next (&it, &key, NULL))
      if (*(guint64 *) key < target)
        g_hash_table_iter_remove (&it);
    while (g_hash_table_remove (s->taken, &s->cursor))
      s->cursor++;
  }
  s->stats.skips++;
}

/* The first keyframe after the cursor that its receiver's deadline has
 * not passed yet (with the session's transit), NO_INDEX: none. A session
 * held up by an outage keeps what it can still deliver in time, where the
 * latest keyframe would throw away up to the receiver's latency more. */
static guint64
earliest_timely_keyframe (MtcpSendQueue * q, MtcpQueueSession * s)
{
  guint64 i, end = queue_end (q);
  GstClockTime elapsed, bound;

  if (!GST_CLOCK_TIME_IS_VALID (s->anchor_time) ||
      !GST_CLOCK_TIME_IS_VALID (s->max_lag_time))
    return NO_INDEX;
  elapsed = (GstClockTime) MAX (q->clock () - s->anchor_us, 0) * GST_USECOND;
  bound = s->max_lag_time - MIN (s->transit, s->max_lag_time);
  for (i = s->cursor + 1; i < end; i++) {
    Entry *e = entry_at (q, i);
    if (e->kind != ENTRY_BUFFER || !e->keyframe ||
        !GST_CLOCK_TIME_IS_VALID (e->time) || e->time < s->anchor_time)
      continue;
    if (elapsed <= e->time - s->anchor_time + bound)
      return i;
  }
  return NO_INDEX;
}

guint
mtcp_send_queue_enforce_limits (MtcpSendQueue * q)
{
  GList *l;
  guint n = 0;

  for (l = q->sessions; l; l = l->next) {
    MtcpQueueSession *s = l->data;
    guint64 target;

    if (!session_over_limits (q, s, TRUE))
      continue;
    /* past its receiver's deadline only, in or just after an outage: from
     * the first keyframe still in time; otherwise the latest keyframe */
    target = !s->keep_timely || session_over_limits (q, s, FALSE) ?
        NO_INDEX : earliest_timely_keyframe (q, s);
    if (target == NO_INDEX && q->latest_keyframe != NO_INDEX &&
        q->latest_keyframe > s->cursor)
      target = q->latest_keyframe;
    if (target == NO_INDEX) {
      /* no keyframe ahead: drop what is queued and wait for the next one */
      target = queue_end (q);
      s->awaiting_keyframe = TRUE;
    }
    GST_DEBUG ("session %p is %" G_GUINT64_FORMAT " bytes behind: skips from "
        "index %" G_GUINT64_FORMAT " to %" G_GUINT64_FORMAT, s,
        session_backlog_bytes (q, s), s->cursor, target);
    session_skip_to (q, s, target);
    n++;
  }
  if (n > 0)
    trim (q);
  return n;
}

gboolean
mtcp_send_queue_over_limits (MtcpSendQueue * q)
{
  GList *l;
  for (l = q->sessions; l; l = l->next)
    if (session_over_limits (q, l->data, FALSE))
      return TRUE;
  return FALSE;
}

gboolean
mtcp_send_queue_drained (MtcpSendQueue * q)
{
  GList *l;
  for (l = q->sessions; l; l = l->next)
    if (mtcp_send_queue_has_pending (q, l->data))
      return FALSE;
  return TRUE;
}

guint64
mtcp_send_queue_session_next_seq (MtcpSendQueue * queue,
    MtcpQueueSession * session)
{
  return session->stats.next_seq;
}

void
mtcp_send_queue_session_stats (MtcpSendQueue * q, MtcpQueueSession * s,
    MtcpQueueSessionStats * stats)
{
  *stats = s->stats;
  stats->backlog_buffers = queue_end (q) > s->cursor ?
      queue_end (q) - s->cursor : 0;
  stats->backlog_bytes = session_backlog_bytes (q, s);
  stats->backlog_time = session_backlog_time (q, s);
}
