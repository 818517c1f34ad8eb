/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* One non-blocking TCP connection carrying multitcp frames: an output queue
 * of encoded frames written with scatter-gather, an incremental frame
 * reader, byte counters, and a GSource whose poll condition can change
 * (IN always, OUT only while output is blocked). Used by both ends. */
#ifndef __MTCP_CONNECTION_H__
#define __MTCP_CONNECTION_H__

#include <gst/gst.h>
#include <gio/gio.h>

#include "mtcpprotocol.h"

G_BEGIN_DECLS

/* An encoded frame ready to write: header bytes, then an optional payload. */
typedef struct {
  guint8 type;                  /* MtcpFrameType */
  guint64 seq;                  /* sequenced frames only */
  guint8 *head;                 /* points at head_inline or an allocation */
  gsize head_size;
  GstBuffer *payload;           /* owned ref, may be NULL */
  gboolean resend;              /* handed out before, on a connection that died */
  gint64 due_us;                /* when the receiver's clock has it due, less
                                 * its latency (monotonic us); 0 = unknown */
  guint64 end_offset;           /* written: the connection's bytes up to its end */
  gint64 written_us;            /* when its last byte was written, 0 = not yet */
  gboolean copied;              /* already sent again before its deadline */
  GSequenceIter *wait_iter;     /* private: its place among the holding
                                 * connection's frames waiting for a deadline */
  MtcpBufferInfo info;          /* BUFFER: what the head is written from, as
                                 * BUFFER or BUFFER_DELTA per connection */
  guint8 head_inline[MTCP_REPORT_FRAME_SIZE > MTCP_BUFFER_DELTA_HEAD_MAX ?
      MTCP_REPORT_FRAME_SIZE : MTCP_BUFFER_DELTA_HEAD_MAX];
} MtcpOutFrame;

MtcpOutFrame *mtcp_out_frame_new (void);
/* a frame whose head needs more than the inline space (caps, refuse) */
guint8 *mtcp_out_frame_alloc_head (MtcpOutFrame * frame, gsize size);
gsize mtcp_out_frame_size (const MtcpOutFrame * frame);
void mtcp_out_frame_free (MtcpOutFrame * frame);

typedef enum {
  MTCP_IO_DONE,                 /* everything queued has been written */
  MTCP_IO_BLOCKED,              /* the socket would block: wait for OUT */
  MTCP_IO_CLOSED,               /* the peer closed the connection */
  MTCP_IO_ERROR,
} MtcpIoResult;

typedef struct _MtcpConnection MtcpConnection;

/* TLS on a connection (GTlsConnection from glib-networking). */
typedef struct {
  gboolean server;
  GTlsCertificate *certificate; /* server: ours, with its private key */
  GTlsDatabase *database;       /* client: trusted CAs, NULL = the system's */
  GTlsCertificateFlags validation_flags;        /* client: errors that refuse */
  const gchar *server_name;     /* client: the identity the certificate must have */
  guint16 port;
} MtcpTlsConfig;

typedef struct _MtcpTlsPending MtcpTlsPending;

/* Called from the GSource with the conditions that fired. Return FALSE
 * after the connection was closed by the callback. */
typedef gboolean (*MtcpConnectionFunc) (MtcpConnection * conn,
    GIOCondition cond, gpointer user_data);

MtcpConnection *mtcp_connection_new (GSocket * socket, guint32 max_body);
void mtcp_connection_free (MtcpConnection * conn);

/* What the owner reads and sets of a connection (the rest is its own). */
GSocket *mtcp_connection_get_socket (MtcpConnection * conn);
/* "host:port" for messages ("unknown" until the owner names it). */
const gchar *mtcp_connection_get_peer (MtcpConnection * conn);
void mtcp_connection_set_peer (MtcpConnection * conn, const gchar * peer);
gpointer mtcp_connection_get_user_data (MtcpConnection * conn);
void mtcp_connection_set_user_data (MtcpConnection * conn, gpointer data);
/* When it was made (monotonic us). */
gint64 mtcp_connection_get_created_us (MtcpConnection * conn);
/* TLS runs over it. */
gboolean mtcp_connection_is_tls (MtcpConnection * conn);
/* The owner's count of handshakes left running at free (see
 * mtcp_connection_wait_orphaned_handshakes). */
void mtcp_connection_set_tls_orphans (MtcpConnection * conn, gint * orphans);

/* Sending a stream: keep written sequenced frames until acknowledged;
 * write BUFFER_DELTA heads (@compact: short ones) the peer said it reads. */
void mtcp_connection_set_keep_sent (MtcpConnection * conn, gboolean keep);
void mtcp_connection_set_heads (MtcpConnection * conn, gboolean buffer_delta,
    gboolean compact);
/* "compact", "delta" or "plain": the heads it writes. */
const gchar *mtcp_connection_heads_name (MtcpConnection * conn);
/* Receiving a stream: fewer pure ACKs (TCP_QUICKACK off while reading). */
void mtcp_connection_set_delay_acks (MtcpConnection * conn, gboolean delay);
/* The last BUFFER_DELTA read, which the next one is relative to. */
MtcpBufferDeltaState *mtcp_connection_delta_in (MtcpConnection * conn);

/* The next whole frame read (see mtcp_frame_reader_next), counted. */
MtcpParseResult mtcp_connection_next_frame (MtcpConnection * conn,
    MtcpFrameHeader * hdr, const guint8 ** body, gchar ** err);
/* The largest frame body accepted from now on. */
void mtcp_connection_set_max_body (MtcpConnection * conn, guint32 max_body);

/* Counters: bytes and frames written and read, bytes and frames queued and
 * not yet written. */
guint64 mtcp_connection_bytes_sent (MtcpConnection * conn);
guint64 mtcp_connection_bytes_received (MtcpConnection * conn);
guint64 mtcp_connection_frames_sent (MtcpConnection * conn);
guint64 mtcp_connection_frames_received (MtcpConnection * conn);
gsize mtcp_connection_unsent_bytes (MtcpConnection * conn);
guint mtcp_connection_unsent_frames (MtcpConnection * conn);

void mtcp_connection_attach (MtcpConnection * conn, GMainContext * context,
    MtcpConnectionFunc func, gpointer user_data);
void mtcp_connection_detach (MtcpConnection * conn);
void mtcp_connection_want_write (MtcpConnection * conn, gboolean want);
/* Dispatch with G_IO_IN at the next iteration even if the fd shows no
 * input: TLS keeps decrypted records the fd does not know about. */
void mtcp_connection_poke_input (MtcpConnection * conn);

/* Wraps the connection in TLS and starts the handshake in the thread-default
 * main context (the I/O thread's) without blocking. Until it is done the
 * connection's callback gets no events and queued output waits; then the
 * callback gets G_IO_OUT, and on failure flush and receive fail with the
 * handshake's error. GLib runs the handshake in a worker thread blocked on
 * the socket: mtcp_connection_free () during it cancels it and shuts the
 * socket down (the peer sees EOF, the worker returns), and the socket is
 * closed and the rest freed when the handshake's callback runs in that
 * context, which must be iterated for it. */
gboolean mtcp_connection_start_tls (MtcpConnection * conn,
    const MtcpTlsConfig * tls, GError ** error);
/* A TLS handshake of a connection freed while in flight ends in the
 * context that started it (GLib's worker returns after the cancel); with
 * conn->tls_orphans set, the owner's count goes up at the free and down
 * there. An owner stopping its context (no source of its own dispatching)
 * iterates it until the count is 0, at most @timeout_us. */
void mtcp_connection_wait_orphaned_handshakes (GMainContext * context,
    gint * orphans, gint64 timeout_us);
/* The same, blocking, on a socket in blocking mode. */
gboolean mtcp_connection_handshake_tls_blocking (MtcpConnection * conn,
    const MtcpTlsConfig * tls, GCancellable * cancellable, GError ** error);
/* A TLS error that another try will not fix (certificate, not TLS). */
gboolean mtcp_tls_error_is_fatal (const GError * error);

/* Takes ownership of @frame. A BUFFER's head is written here, as
 * BUFFER_DELTA when the peer reads those. */
void mtcp_connection_queue (MtcpConnection * conn, MtcpOutFrame * frame);
/* Drop kept frames up to and including @seq: the peer has them. */
void mtcp_connection_ack (MtcpConnection * conn, guint64 seq);
/* Sequenced frames this connection was given and the peer has not
 * acknowledged (sent or not), oldest first; the connection keeps none. */
GList *mtcp_connection_take_unacked (MtcpConnection * conn);

/* Bounds what a connection keeps of the frames it wrote and the receiver
 * has not acknowledged (`sent`), for the owner to call on every tick:
 * - by deadline: walking `sent` oldest first, a frame whose due_us is set
 *   and <= @keep_due_after_us is dropped (the receiver released or gave up
 *   on its slot: a copy or a hand-over would arrive late), and so are the
 *   SKIP frames and untimed BUFFERs written before it with a lower seq
 *   (the receiver is past them). The walk stops at the first frame with a
 *   due time still ahead: frames written after it (copies, frames handed
 *   over from a closed connection) wait for it, which keeps this
 *   O(dropped). G_MININT64: no deadline bound.
 * - by bytes: then, while `sent` holds more than @max_kept_bytes (0 keeps
 *   none, G_MAXSIZE no bound), its oldest frames are dropped.
 * CAPS and EOS are never dropped here, only by mtcp_connection_ack: a
 * receiver that lost one on a connection that died would decode with the
 * wrong caps or never end, and they are few and small. Dropping the
 * others loses nothing TCP has not delivered unless the connection dies
 * (then mtcp_connection_take_unacked no longer has them: the receiver
 * skips the hole at its deadline). Frames queued and not written are not
 * touched. Returns how many frames were dropped, their bytes in
 * @bytes_out (may be NULL). */
guint mtcp_connection_expire_sent (MtcpConnection * conn,
    gint64 keep_due_after_us, gsize max_kept_bytes, gsize * bytes_out);
/* Bytes of the frames written and kept until acknowledged (`sent`). O(1). */
gsize mtcp_connection_kept_bytes (MtcpConnection * conn);

/* Whether this connection holds sequenced frame @seq (written and not
 * acknowledged, or queued). O(1) (a count per seq: frames given to a
 * connection are not in seq order, copies and hand-overs come later). */
gboolean mtcp_connection_holds_frame (MtcpConnection * conn, guint64 seq);
/* Copies of the sequenced frames this connection holds from @seq on
 * (written and not acknowledged, then queued), in the order it has them;
 * those frames count as copied (mtcp_connection_copy_frames_due skips them). */
GList *mtcp_connection_copy_frames_from (MtcpConnection * conn, guint64 seq);

/* The due time (MtcpOutFrame.due_us) of the oldest frame this connection
 * holds that has a due time and was not copied yet (the earliest such due
 * time, wherever that frame is: frames handed over from a closed
 * connection come after later ones); G_MAXINT64 if none. O(log n): the
 * connection keeps those frames ordered by due time. */
gint64 mtcp_connection_first_due (MtcpConnection * conn);
/* When the oldest frame this connection wrote and its TCP peer has not
 * acknowledged (@tcp_bytes_acked: TCP_INFO's bytes_acked) was written
 * before @stale_before_us, the connection is stuck (a loss it has not
 * repaired): copies of that frame and of every later one it holds (TCP
 * delivers in order) that are due before @due_before_us, each frame once,
 * oldest first. NULL otherwise, and on TLS, whose TCP bytes are not the
 * frames'. */
GList *mtcp_connection_copy_frames_due (MtcpConnection * conn,
    guint64 tcp_bytes_acked, gint64 stale_before_us, gint64 due_before_us);

/* When the oldest frame this connection wrote that its TCP peer has not
 * acknowledged (@tcp_bytes_acked: TCP_INFO's bytes_acked) was written;
 * G_MAXINT64 when none is (all acknowledged, or only control frames in
 * flight) or it cannot tell (TLS). */
gint64 mtcp_connection_unacked_since (MtcpConnection * conn,
    guint64 tcp_bytes_acked);

/* What a copy of a frame needs to know of a connection it could go out on. */
typedef struct {
  gint64 room;                  /* bytes its congestion window takes now */
  guint32 rtt_us;
  gboolean repairing;           /* in loss recovery */
  gboolean excluded;            /* the holder, or it has the frame already */
} MtcpCopyTarget;

/* The one of @n candidates a copy reaches the receiver soonest on: not
 * excluded; one repairing a loss only when every other is; the most room,
 * then the shortest RTT. -1 if every one is excluded. */
gint mtcp_copy_target_pick (const MtcpCopyTarget * targets, guint n);

/* Write what is queued until done or the socket would block. */
MtcpIoResult mtcp_connection_flush (MtcpConnection * conn, GError ** error);
/* No queued output and the kernel will take more (honours NOTSENT_LOWAT). */
gboolean mtcp_connection_can_take (MtcpConnection * conn);
gboolean mtcp_connection_is_idle (MtcpConnection * conn);

/* Read what the socket has into the frame reader. */
MtcpIoResult mtcp_connection_receive (MtcpConnection * conn, GError ** error);

/* Blocking helpers for handshakes on a socket in blocking mode. */
gboolean mtcp_connection_send_all_blocking (MtcpConnection * conn,
    const guint8 * data, gsize size, GCancellable * cancellable,
    GError ** error);
/* Reads until one whole frame is there; *body valid until the next read. */
gboolean mtcp_connection_read_frame_blocking (MtcpConnection * conn,
    MtcpFrameHeader * hdr, const guint8 ** body, GCancellable * cancellable,
    GError ** error);

/* BUFFER, CAPS, EOS and SKIP: what the receiver orders by sequence number */
gboolean mtcp_frame_is_sequenced (guint8 type);

/* Buffer flags between GstBufferFlags and the wire's MtcpBufferFlags. */
guint32 mtcp_buffer_flags_to_wire (GstBufferFlags flags);
GstBufferFlags mtcp_buffer_flags_from_wire (guint32 flags);

/* Convenience encoders into new frames. */
MtcpOutFrame *mtcp_out_frame_new_refuse (guint16 code, const gchar * reason);
MtcpOutFrame *mtcp_out_frame_new_welcome (const MtcpWelcome * welcome);
MtcpOutFrame *mtcp_out_frame_new_report (const MtcpReport * report);
MtcpOutFrame *mtcp_out_frame_new_feedback (const MtcpFeedback * fb);
/* PADDING of @size bytes on the wire, header included (at least the
 * header, at most MTCP_PADDING_MAX: a body any receiver takes) */
#define MTCP_PADDING_MAX (MTCP_HEADER_SIZE + MTCP_MAX_FRAME_MIN)
MtcpOutFrame *mtcp_out_frame_new_padding (gsize size);

G_END_DECLS

#endif
