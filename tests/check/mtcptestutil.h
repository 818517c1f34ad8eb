/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* What the element tests share: a sender (appsrc ! multitcpsink) and a
 * receiver (multitcpsrc ! appsink) on loopback, reading their stats, a
 * stream checked buffer by buffer, and raw peers that speak the protocol
 * byte by byte (a receiver of our own, or a hostile one). */
#ifndef __MTCP_TEST_UTIL_H__
#define __MTCP_TEST_UTIL_H__

#include <gst/check/gstcheck.h>
#include <gio/gio.h>

#include "mtcpprotocol.h"

G_BEGIN_DECLS

#define WAIT_TIMEOUT (20 * GST_SECOND)

#define CHECKED_FLAGS (GST_BUFFER_FLAG_DELTA_UNIT | GST_BUFFER_FLAG_HEADER | \
    GST_BUFFER_FLAG_DROPPABLE | GST_BUFFER_FLAG_MARKER)

/* AddressSanitizer keeps freed memory in a quarantine (256 MB) and adds
 * redzones: RSS then says nothing about what the sink holds */
#if defined(__SANITIZE_ADDRESS__)
#define RSS_IS_MEANINGFUL FALSE
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define RSS_IS_MEANINGFUL FALSE
#endif
#endif
#ifndef RSS_IS_MEANINGFUL
#define RSS_IS_MEANINGFUL TRUE
#endif

typedef struct {
  GstElement *pipeline;
  GstElement *appsrc;
  GstElement *sink;
} Sender;

typedef struct {
  GstElement *pipeline;
  GstElement *src;
  GstElement *appsink;
} Receiver;

/* A raw receiver connection: a socket and a reader of what the sink sends. */
typedef struct {
  GSocket *sock;
  MtcpFrameReader *reader;
} RawConn;

Sender *sender_new (const gchar * sink_props);

gint sender_port (Sender * s);

void sender_free (Sender * s);

Receiver *receiver_new_with (gint port, guint connections, guint latency_ms, const gchar * src_props);

Receiver *receiver_new (gint port, guint connections, guint latency_ms);

void receiver_free (Receiver * r);

guint64 stats_uint64 (GstElement * e, const gchar * field);

guint stats_uint (GstElement * e, const gchar * field);

/* An unsigned field (guint or guint64) of a stats structure, 0 if absent. */
guint64 structure_unsigned (const GstStructure * st, const gchar * field);

/* A field of the sink's sessions, or with @per_connection of their
 * connections, summed. */
guint64 sink_stats_sum (GstElement * sink, gboolean per_connection, const gchar * field);

/* Connections the sink has in its sessions, summed. */
guint sink_connections (GstElement * sink);

void wait_for_connections (GstElement * sink, guint n);

GstBuffer *make_payload (GRand * rand, guint index, gsize size);

gboolean buffers_equal (GstBuffer * a, GstBuffer * b);

/* Sends @n buffers with caps, a header, keyframes every 30, random sizes
 * and timestamps 33 ms apart; checks that @receivers get all of it. */
void stream_and_check (Sender * s, Receiver ** receivers, guint n_receivers, guint n, gboolean timestamps);
/* The same; @receiver_ends FALSE: the receivers do not end with the
 * sender's EOS (a listener that keeps listening). */
void stream_and_check_full (Sender * s, Receiver ** receivers,
    guint n_receivers, guint n, gboolean timestamps, gboolean receiver_ends);

/* @rcvbuf: SO_RCVBUF before connecting, 0 = the kernel's own */
GSocket *raw_connect_rcvbuf (gint port, gint rcvbuf);

/* A socket listening on an ephemeral loopback port (IPv4), its port in
 * @port: a hand-driven peer's end */
GSocket *loopback_listen (guint * port);
GSocket *raw_connect (gint port);

void raw_send (GSocket * sock, const guint8 * data, gsize size);

/* Reads until the peer closes; returns what came (and a REFUSE reason). */
gchar *raw_read_refusal (GSocket * sock, gboolean * closed);

void write_hello (guint8 * out, guint32 magic, guint16 version);

/* Sleeps until buffer @index of a stream started at @start_us (monotonic)
 * with @period_us between buffers is due: paced on the clock as a live
 * source's timestamps are, where a sleep per buffer would fall behind them
 * on a busy machine (and the sink rightly drops what is later than the
 * receiver's latency). */
void pace_live (gint64 start_us, guint index, guint period_us);

guint64 rss_kb (void);

/* Joins (or opens, @sid NULL) a session the way multitcpsrc does, with
 * HELLO flags @flags (0: plain BUFFER frames); the session id lands in
 * @sid_out. */
void raw_conn_open_full (RawConn * rc, gint port, const guint8 * sid, guint8 flags, guint32 latency_ms, gint rcvbuf, guint8 * sid_out);
/* The same, FALSE (with @rc open: close it) when the sink does not
 * welcome us: a test's attackers may be refused. */
gboolean raw_conn_try_open (RawConn * rc, gint port, const guint8 * sid, guint8 flags, guint32 latency_ms, gint rcvbuf, guint8 * sid_out);

void raw_conn_open (RawConn * rc, gint port, const guint8 * sid, guint8 flags, guint8 * sid_out);

void raw_conn_close (RawConn * rc);

/* Reads what arrives on @rc for up to @timeout_us; BUFFER sequence numbers
 * go into @arrivals (seq -> bit mask of the connections that brought it). */
void raw_conn_read (RawConn * rc, guint index, GHashTable * arrivals, gint64 timeout_us);

void raw_conn_feedback (RawConn * rc, guint64 highest, guint64 buffered);

/* Reads @rc until @until (monotonic us). */
void raw_conn_read_until (RawConn * rc, guint index, GHashTable * arrivals, gint64 until);

/* A self-signed certificate for localhost and 127.0.0.1 in a new temporary
 * directory (cert.pem, key.pem), or NULL when openssl is not installed;
 * remove_tls_certificate () deletes it and frees @dir. */
gchar *make_tls_certificate (void);
void remove_tls_certificate (gchar * dir);
/* The first error @pipeline posts within @timeout, as "message | debug";
 * NULL if none. */
gchar *wait_for_error (GstElement * pipeline, GstClockTime timeout);
/* The details of the first warning @pipeline posts within @timeout that
 * has a "kind" field (a failed dial or reconnect), or NULL; free it. */
GstStructure *wait_for_warning_details (GstElement * pipeline,
    GstClockTime timeout);

/* Buffer @index of a tagged stream: @size bytes of the index's low 8
 * bits, 10 ms of PTS apart, a keyframe every @key (0: no flags). */
void push_tagged (Sender * s, guint index, gsize size, guint key);
/* Pulls the @n buffers push_tagged sent, in order; none late or skipped. */
void expect_tagged (Receiver * r, guint n);

G_END_DECLS

#endif
