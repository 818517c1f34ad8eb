/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

/* What a session carries at the receiver: BUFFER, CAPS, EOS and SKIP
 * into the reorder buffer with the deadline the time base gives them
 * (mtcptimemap.c), the sink's REPORT for the control, and the FEEDBACK
 * that acknowledges what is in order. */

#include "mtcpclientprivate.h"

#include <string.h>

GST_DEBUG_CATEGORY (mtcp_client_frames_debug);
#define GST_CAT_DEFAULT mtcp_client_frames_debug

/* REPORT values beyond these are not a real sink's: clamped on arrival so
 * the controllers' arithmetic stays in range */
#define MAX_REPORT_BITRATE G_GUINT64_CONSTANT (100000000000)    /* 100 Gbit/s */
#define MAX_REPORT_RTT_US (60 * G_USEC_PER_SEC)
#define MAX_REPORT_BYTES (G_MAXUINT64 / 4)

static void
hold_item (MtcpClient * client, ClientConn * cc, MtcpItem * item,
    GstClockTime deadline, GstClockTime now, gsize size)
{
  switch (mtcp_reorder_push (client->reorder, item->seq, deadline, now, size,
          item)) {
    case MTCP_REORDER_ACCEPTED:
      client->payload_received += size;
      g_cond_broadcast (&client->cond);
      return;
    case MTCP_REORDER_LATE:
      client->payload_received += size;
      client->late++;
      /* what was held behind it goes now (a wake at every late one, after
       * an outage, made netsim-resume's slower outcome come out) */
      if (mtcp_reorder_late_unblocks (client->reorder))
        g_cond_broadcast (&client->cond);
      GST_LOG ("seq %" G_GUINT64_FORMAT " on connection %u is late",
          item->seq, cc->index);
      break;
    case MTCP_REORDER_DUPLICATE:
      client->duplicates++;
      break;
    case MTCP_REORDER_TOO_FAR:
      client->protocol_errors++;
      GST_WARNING ("seq %" G_GUINT64_FORMAT " is beyond the reorder window",
          item->seq);
      break;
    case MTCP_REORDER_FULL:
      /* counted in the reorder stats (buffers-overflow) */
      client->payload_received += size;
      GST_LOG ("seq %" G_GUINT64_FORMAT " on connection %u: reorder buffer "
          "full", item->seq, cc->index);
      break;
  }
  client_item_free (item);
}

static gboolean
handle_buffer (MtcpClient * client, ClientConn * cc, guint8 type,
    const guint8 * body, gsize size, GstClockTime now, gchar ** err)
{
  MtcpBufferInfo info;
  const guint8 *payload;
  MtcpItem *item;
  GstBuffer *buf;
  GstClockTime deadline = GST_CLOCK_TIME_NONE, ref;

  if (type == MTCP_FRAME_BUFFER_DELTA ?
      !mtcp_parse_buffer_delta (body, size, mtcp_connection_delta_in (cc->conn),
          &info, &payload, err) : !mtcp_parse_buffer (body, size, &info,
          &payload, err))
    return FALSE;
  if ((info.pts != MTCP_TIME_NONE && info.pts > MTCP_TIME_MAP_MAX) ||
      (info.dts != MTCP_TIME_NONE && info.dts > MTCP_TIME_MAP_MAX) ||
      (info.duration != MTCP_TIME_NONE && info.duration > MTCP_TIME_MAP_MAX)) {
    *err = g_strdup_printf ("seq %" G_GUINT64_FORMAT ": a timestamp beyond %"
        GST_TIME_FORMAT, info.seq, GST_TIME_ARGS (MTCP_TIME_MAP_MAX));
    return FALSE;
  }
  buf = gst_buffer_new_memdup (payload, info.payload_size);
  GST_BUFFER_FLAGS (buf) = mtcp_buffer_flags_from_wire (info.flags);
  /* DTS first: it is the earlier of the two and decides decode order */
  ref = info.dts != MTCP_TIME_NONE ? info.dts : info.pts;
  if (ref != MTCP_TIME_NONE)
    mtcp_time_map_observe (client->time_map, ref, now);
  GST_BUFFER_DTS (buf) = mtcp_time_map_to_local (client->time_map, info.dts);
  GST_BUFFER_PTS (buf) = mtcp_time_map_to_local (client->time_map, info.pts);
  if (info.duration != MTCP_TIME_NONE)
    GST_BUFFER_DURATION (buf) = info.duration;
  if (ref != MTCP_TIME_NONE)
    deadline = mtcp_time_map_deadline (client->time_map, ref);
  /* a connection's first buffer: the sink is one we can use, a later
   * failure starts a new count (not each buffer: another connection's
   * refused joins still back off) */
  if (cc->buffers_received++ == 0)
    client->failures = 0;
  client->buffers_received++;

  item = g_new0 (MtcpItem, 1);
  item->kind = MTCP_ITEM_BUFFER;
  item->seq = info.seq;
  item->buffer = buf;
  hold_item (client, cc, item, deadline, now, info.payload_size);
  return TRUE;
}

static gboolean
handle_caps (MtcpClient * client, ClientConn * cc, const guint8 * body,
    gsize size, GstClockTime now, gchar ** err)
{
  guint64 seq;
  gchar *str;
  GstCaps *caps;
  MtcpItem *item;

  if (!mtcp_parse_caps (body, size, &seq, &str, err))
    return FALSE;
  caps = gst_caps_from_string (str);
  if (caps == NULL || !gst_caps_is_fixed (caps)) {
    *err = g_strdup_printf ("caps that cannot be used: '%.200s'", str);
    gst_clear_caps (&caps);
    g_free (str);
    return FALSE;
  }
  GST_DEBUG ("caps seq %" G_GUINT64_FORMAT ": %s", seq, str);
  g_free (str);
  item = g_new0 (MtcpItem, 1);
  item->kind = MTCP_ITEM_CAPS;
  item->seq = seq;
  item->caps = caps;
  /* no timestamp, but a gap before it must not hold it forever; its text
   * counts towards the byte cap */
  hold_item (client, cc, item, now + mtcp_time_map_horizon (client->time_map),
      now, size);
  return TRUE;
}

/* What the sink holds for this session and has not sent yet: its queue
 * plus every connection's unsent bytes. */
static void
note_sender_backlog (MtcpClient * client)
{
  GList *l;
  guint64 queued = 0, unsent = 0;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (!cc->report_us)
      continue;
    queued = MAX (queued, cc->report.backlog_bytes);
    /* each is at most G_MAXUINT64 / 4 (sanitize_report): saturate the sum */
    unsent = MIN (unsent + cc->report.unsent_bytes, MAX_REPORT_BYTES);
  }
  mtcp_control_note_report (client->control, 0, queued + unsent);
}

/* Clamps what the controllers compute with to what a real sink reports:
 * doubles from these are cast back to integers. No lock. */
static void
sanitize_report (MtcpReport * r)
{
  r->stream_bitrate = MIN (r->stream_bitrate, MAX_REPORT_BITRATE);
  r->backlog_bytes = MIN (r->backlog_bytes, MAX_REPORT_BYTES);
  r->unsent_bytes = MIN (r->unsent_bytes, MAX_REPORT_BYTES);
  r->bytes_acked = MIN (r->bytes_acked, MAX_REPORT_BYTES);
  r->rtt_us = MIN (r->rtt_us, MAX_REPORT_RTT_US);
  r->rttvar_us = MIN (r->rttvar_us, MAX_REPORT_RTT_US);
  if (r->snd_mss != 0)
    r->snd_mss = CLAMP (r->snd_mss, 64, 65535);
}

/* Called with the lock. */
gboolean
client_handle_data_frame (MtcpClient * client, ClientConn * cc,
    const MtcpFrameHeader * hdr, const guint8 * body, GstClockTime now,
    gchar ** err)
{
  switch (hdr->type) {
    case MTCP_FRAME_BUFFER:
    case MTCP_FRAME_BUFFER_DELTA:
      return handle_buffer (client, cc, hdr->type, body, hdr->length, now, err);
    case MTCP_FRAME_CAPS:
      return handle_caps (client, cc, body, hdr->length, now, err);
    case MTCP_FRAME_EOS:{
      guint64 seq;
      MtcpItem *item;
      if (!mtcp_parse_eos (body, hdr->length, &seq, err))
        return FALSE;
      GST_DEBUG ("EOS at seq %" G_GUINT64_FORMAT, seq);
      item = g_new0 (MtcpItem, 1);
      item->kind = MTCP_ITEM_EOS;
      item->seq = seq;
      hold_item (client, cc, item,
          now + mtcp_time_map_horizon (client->time_map), now, 0);
      return TRUE;
    }
    case MTCP_FRAME_SKIP:{
      MtcpSkip skip;
      if (!mtcp_parse_skip (body, hdr->length, &skip, err))
        return FALSE;
      GST_DEBUG ("sender skipped seq %" G_GUINT64_FORMAT "..%"
          G_GUINT64_FORMAT, skip.first_seq, skip.end_seq);
      if (!mtcp_reorder_skip_range (client->reorder, skip.first_seq,
              skip.end_seq)) {
        g_cond_broadcast (&client->cond);
        *err = g_strdup_printf ("SKIP %" G_GUINT64_FORMAT "..%"
            G_GUINT64_FORMAT " starts beyond the reorder window or exceeds "
            "%u outstanding ranges", skip.first_seq, skip.end_seq,
            MTCP_REORDER_MAX_RANGES);
        return FALSE;
      }
      g_cond_broadcast (&client->cond);
      return TRUE;
    }
    case MTCP_FRAME_REPORT:
      if (!mtcp_parse_report (body, hdr->length, &cc->report, err))
        return FALSE;
      sanitize_report (&cc->report);
      cc->report_us = g_get_monotonic_time ();
      mtcp_pars_first_recovery_note (&cc->first_recovery,
          cc->report.total_retrans, cc->report.bytes_acked,
          cc->report.rtt_us, cc->report_us);
      mtcp_control_note_report (client->control, cc->report.rtt_us, 0);
      note_sender_backlog (client);
      return TRUE;
    case MTCP_FRAME_PADDING:
      /* the sink measures what the path carries above the stream */
      client->padding_bytes += hdr->head_size + hdr->length;
      return TRUE;
    case MTCP_FRAME_REFUSE:{
      MtcpRefuse refuse;
      if (mtcp_parse_refuse (body, hdr->length, &refuse, err))
        *err = g_strdup_printf ("refused by the sink: %s", refuse.reason);
      return FALSE;
    }
    case MTCP_FRAME_HELLO:
    case MTCP_FRAME_WELCOME:
    case MTCP_FRAME_FEEDBACK:
      *err = g_strdup_printf ("unexpected %s frame",
          mtcp_frame_type_name (hdr->type));
      return FALSE;
    default:
      GST_DEBUG ("skipping frame of unknown type 0x%02x", hdr->type);
      return TRUE;
  }
}

void
client_send_feedback (MtcpClient * client, ClientConn * cc, gint64 now_us)
{
  MtcpFeedback fb;
  MtcpReorderStats rs;
  GstClockTime first = mtcp_reorder_first_deadline (client->reorder);
  GstClockTime now = (GstClockTime) now_us * GST_USECOND;

  mtcp_reorder_get_stats (client->reorder, &rs);
  memset (&fb, 0, sizeof (fb));
  fb.highest_in_order = mtcp_reorder_highest_in_order (client->reorder);
  fb.buffered_bytes = rs.bytes;
  fb.buffered_time = GST_CLOCK_TIME_IS_VALID (first) && first > now ?
      first - now : 0;
  /* the playout buffer: released and not yet due, and what waits in order
   * to be released (the element pushes one buffer at a time into a sink
   * that syncs) */
  fb.playout_bytes = mtcp_playout_bytes (client->playout, now) +
      mtcp_reorder_in_order_bytes (client->reorder);
  fb.playout_time = mtcp_playout_time (client->playout, now);
  if (cc->report_us) {
    fb.echo_sink_time_us = cc->report.sink_time_us;
    fb.echo_delay_us = now_us - cc->report_us;
  }
  mtcp_connection_queue (cc->conn, mtcp_out_frame_new_feedback (&fb));
}

/* The connection whose FEEDBACK is oldest carries this tick's. */
ClientConn *
client_feedback_carrier (MtcpClient * client)
{
  ClientConn *oldest = NULL;
  GList *l;

  for (l = client->conns; l; l = l->next) {
    ClientConn *cc = l->data;
    if (cc->state == CONN_READY && (oldest == NULL ||
            cc->feedback_us < oldest->feedback_us))
      oldest = cc;
  }
  return oldest;
}
