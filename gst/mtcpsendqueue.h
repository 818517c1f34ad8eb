/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The sink's shared send queue (DMP-streaming's "server queue"): one
 * sequence of refcounted buffers, caps changes and EOS, and one cursor per
 * session into it. Connections take the next frame at their session's
 * cursor when their socket can take it; which connection asks is the
 * scheduler's business (see mtcp_scheduler_*), not the queue's.
 *
 * A session's sequence numbers are queue positions plus a per-session
 * offset, so a session that joins late starts at 0 with its preamble (caps
 * and stream headers) and a session that falls behind its bound skips to
 * the latest keyframe, telling the receiver with a SKIP frame.
 *
 * No locking inside: the owner (MtcpServer) serialises calls. */
#ifndef __MTCP_SEND_QUEUE_H__
#define __MTCP_SEND_QUEUE_H__

#include <gst/gst.h>

#include "mtcpconnection.h"

G_BEGIN_DECLS

typedef struct _MtcpSendQueue MtcpSendQueue;
typedef struct _MtcpQueueSession MtcpQueueSession;

typedef enum {
  MTCP_SCHEDULER_DYNAMIC,       /* every writable connection pulls until blocked */
  MTCP_SCHEDULER_ROUND_ROBIN,   /* one frame per connection in turn, skip blocked */
  MTCP_SCHEDULER_STATIC,        /* seq mod N decides the connection */
} MtcpScheduler;

typedef struct {
  guint64 max_lag_bytes;        /* 0 = unlimited */
  GstClockTime max_lag_time;    /* GST_CLOCK_TIME_NONE = unlimited */
} MtcpSendQueueLimits;

typedef struct {
  guint64 buffers_sent;
  guint64 bytes_sent;           /* payload bytes handed to connections */
  guint64 buffers_dropped;      /* skipped because the session fell behind */
  guint64 bytes_dropped;
  guint64 skips;                /* times it jumped to a keyframe */
  guint64 frames_resent;        /* given again after their connection died */
  guint64 backlog_buffers;      /* entries not yet handed out */
  guint64 backlog_bytes;
  GstClockTime backlog_time;
  guint64 next_seq;
} MtcpQueueSessionStats;

MtcpSendQueue *mtcp_send_queue_new (const MtcpSendQueueLimits * limits);
/* Monotonic microseconds; g_get_monotonic_time unless a test sets its own. */
typedef gint64 (*MtcpSendQueueClock) (void);
void mtcp_send_queue_set_clock (MtcpSendQueue * queue, MtcpSendQueueClock clock);
void mtcp_send_queue_free (MtcpSendQueue * queue);
void mtcp_send_queue_set_limits (MtcpSendQueue * queue,
    const MtcpSendQueueLimits * limits);

/* Producer side. Times are running times (ns) or GST_CLOCK_TIME_NONE. */
void mtcp_send_queue_push_caps (MtcpSendQueue * queue, GstCaps * caps);
void mtcp_send_queue_push_buffer (MtcpSendQueue * queue, GstBuffer * buffer,
    GstClockTime pts, GstClockTime dts, GstClockTime duration);
void mtcp_send_queue_push_eos (MtcpSendQueue * queue);

/* Moves every session that is further behind than the limits (or its own
 * lag bound) to the latest keyframe, one past its own bound only and told
 * to keep what is in time to the first keyframe still in time for its
 * receiver (live upstream). Returns how many sessions skipped. */
guint mtcp_send_queue_enforce_limits (MtcpSendQueue * queue);
/* Largest backlog of any session, for holding back a non-live upstream. */
gboolean mtcp_send_queue_over_limits (MtcpSendQueue * queue);
/* TRUE when no session has anything left to hand out. */
gboolean mtcp_send_queue_drained (MtcpSendQueue * queue);

guint64 mtcp_send_queue_get_bytes (MtcpSendQueue * queue);
guint64 mtcp_send_queue_get_length (MtcpSendQueue * queue);
guint64 mtcp_send_queue_get_total_pushed (MtcpSendQueue * queue);

/* Sessions: a new one starts at the latest keyframe after a preamble of the
 * caps in force there and the stream headers. */
MtcpQueueSession *mtcp_send_queue_add_session (MtcpSendQueue * queue);
/* The same, but from the latest keyframe only when no more than
 * @max_backlog payload bytes were pushed since it; otherwise it waits for
 * the next one. A receiver that joins over a path that cannot carry what
 * is queued in time would only skip it after sending part of it. */
MtcpQueueSession *mtcp_send_queue_add_session_within (MtcpSendQueue * queue,
    guint64 max_backlog);
void mtcp_send_queue_remove_session (MtcpSendQueue * queue,
    MtcpQueueSession * session);
/* A bound of the session's own on its lag: its receiver's latency. Once
 * the next buffer it would hand out was due more than that ago by the
 * receiver's clock (anchored on the first buffer handed out), the session
 * skips to the latest keyframe (see keep_timely): the rest could only
 * arrive late. The
 * queue's max_lag_time applies as before. GST_CLOCK_TIME_NONE: none. */
void mtcp_send_queue_session_set_max_lag (MtcpSendQueue * queue,
    MtcpQueueSession * session, GstClockTime max_lag);
/* How much later than the first buffer a buffer handed out now reaches the
 * receiver, on the session's fastest connection (what waits in its socket,
 * the queueing its RTT shows): the session skips once the next buffer
 * could only arrive past the lag bound (0 = nothing known). */
void mtcp_send_queue_session_set_transit (MtcpSendQueue * queue,
    MtcpQueueSession * session, GstClockTime transit);
/* TRUE: past its own lag bound the session skips to the first keyframe
 * still in time (an outage, or just after one); FALSE (the default): to
 * the latest keyframe, as behind the queue's limits. */
void mtcp_send_queue_session_keep_timely (MtcpSendQueue * queue,
    MtcpQueueSession * session, gboolean keep_timely);
/* How late the next buffer the session hands out is already, by the
 * receiver's clock (0: on time, or nothing to go by). */
GstClockTime mtcp_send_queue_session_late_by (MtcpSendQueue * queue,
    MtcpQueueSession * session);

/* The next frame at the session's cursor, or NULL if none. */
MtcpOutFrame *mtcp_send_queue_take (MtcpSendQueue * queue,
    MtcpQueueSession * session);
/* Static striping: the next frame whose sequence number is @lane mod
 * @n_lanes, or NULL if that one is not there yet. */
MtcpOutFrame *mtcp_send_queue_take_lane (MtcpSendQueue * queue,
    MtcpQueueSession * session, guint lane, guint n_lanes);
gboolean mtcp_send_queue_has_pending (MtcpSendQueue * queue,
    MtcpQueueSession * session);
/* Frames a dead connection held unacknowledged: they go out again first, in
 * sequence order. Takes the list and the frames. */
void mtcp_send_queue_requeue (MtcpSendQueue * queue,
    MtcpQueueSession * session, GList * frames);

/* One past the highest sequence number handed out so far. O(1). */
guint64 mtcp_send_queue_session_next_seq (MtcpSendQueue * queue,
    MtcpQueueSession * session);
void mtcp_send_queue_session_stats (MtcpSendQueue * queue,
    MtcpQueueSession * session, MtcpQueueSessionStats * stats);

const gchar *mtcp_scheduler_nick (MtcpScheduler scheduler);

G_END_DECLS

#endif
