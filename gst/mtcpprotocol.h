/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* multitcp wire protocol, version 1: see docs/protocol.md.
 *
 * Every frame is an 8-byte header followed by `length` body bytes:
 *   u8 type, u8 flags, u16 reserved (0), u32 length      (big-endian)
 * or, to a receiver that asked for it (HELLO flag COMPACT), a 3-byte one:
 *   u8 0x80 | type, u16 length
 * A reader checks `length` against a limit before it allocates anything,
 * and skips frames of unknown type by their length. */
#ifndef __MTCP_PROTOCOL_H__
#define __MTCP_PROTOCOL_H__

#include <glib.h>

G_BEGIN_DECLS

#define MTCP_MAGIC            0x4d544350u       /* "MTCP" */
#define MTCP_VERSION          1
#define MTCP_HEADER_SIZE      8
/* the short header: types stay below 0x80, so the top bit marks it */
#define MTCP_SHORT_HEADER_SIZE 3
#define MTCP_SHORT_HEADER_BIT  0x80
#define MTCP_SHORT_BODY_MAX    G_MAXUINT16
#define MTCP_SESSION_ID_SIZE  16

/* Hard limits, applied before a length or count is used. */
#define MTCP_MAX_FRAME_DEFAULT   (16 * 1024 * 1024)      /* body bytes */
#define MTCP_MAX_FRAME_LIMIT     (256 * 1024 * 1024)
/* the least max-frame-size either end may set: a frame with a body no
 * larger is one every receiver takes (PADDING) */
#define MTCP_MAX_FRAME_MIN       1024
#define MTCP_MAX_CONTROL_BODY    (64 * 1024)  /* handshake, caps, feedback */
#define MTCP_MAX_REASON          1024
/* largest frame a connection may send before its handshake is done: HELLO
 * and AUTH are far smaller, so a stranger cannot make us hold more; also
 * the limit on CHALLENGE, AUTH and PROOF in any reader */
#define MTCP_MAX_HANDSHAKE_BODY  256
/* largest frame body a receiver sends once admitted (FEEDBACK is 64 bytes,
 * RETIRE empty), with room for frames of types added later, which the sink
 * skips */
#define MTCP_MAX_RECEIVER_BODY   4096

typedef enum {
  MTCP_FRAME_HELLO = 0x01,      /* receiver -> sink: join or open a session */
  MTCP_FRAME_WELCOME = 0x02,    /* sink -> receiver: session id, connection id */
  MTCP_FRAME_REFUSE = 0x03,     /* either way: readable reason, then close */
  MTCP_FRAME_CHALLENGE = 0x04,  /* sink -> receiver: prove the passphrase */
  MTCP_FRAME_AUTH = 0x05,       /* receiver -> sink: its nonce and proof */
  MTCP_FRAME_PROOF = 0x06,      /* sink -> receiver: the sink's proof, just
                                 * before WELCOME */
  MTCP_FRAME_CAPS = 0x10,       /* sink -> receiver, sequenced */
  MTCP_FRAME_BUFFER = 0x11,     /* sink -> receiver, sequenced */
  MTCP_FRAME_EOS = 0x12,        /* sink -> receiver, sequenced */
  MTCP_FRAME_SKIP = 0x13,       /* sink -> receiver: a range that will never come */
  MTCP_FRAME_BUFFER_DELTA = 0x14,       /* BUFFER with its fields coded against
                                         * the previous one on the connection */
  MTCP_FRAME_PADDING = 0x15,    /* sink -> receiver: bytes to skip, a probe
                                 * of the path above the stream */
  MTCP_FRAME_REPORT = 0x20,     /* sink -> receiver: connection and stream state */
  MTCP_FRAME_FEEDBACK = 0x21,   /* receiver -> sink: progress and buffer level */
  MTCP_FRAME_RETIRE = 0x22,     /* receiver -> sink: give this connection no
                                 * more frames, close it once it sent them */
  MTCP_FRAME_WANT = 0x23,       /* receiver -> sink that dials: how many
                                 * connections the session should have */
} MtcpFrameType;

/* HELLO flags */
#define MTCP_HELLO_FLAG_JOIN   0x01     /* session_id names an existing session */
#define MTCP_HELLO_FLAG_BUFFER_DELTA 0x02       /* the receiver reads BUFFER_DELTA */
/* the receiver reads short headers and BUFFER_DELTA's SAME mask */
#define MTCP_HELLO_FLAG_COMPACT 0x04
/* the receiver speaks the mutual passphrase handshake (52-byte CHALLENGE,
 * AUTH with its nonce, PROOF); a sink with a passphrase refuses one that
 * does not */
#define MTCP_HELLO_FLAG_MUTUAL_AUTH 0x08

/* Buffer flags on the wire (independent of GstBufferFlags values) */
typedef enum {
  MTCP_BUF_DELTA = 1 << 0,
  MTCP_BUF_HEADER = 1 << 1,
  MTCP_BUF_DISCONT = 1 << 2,
  MTCP_BUF_GAP = 1 << 3,
  MTCP_BUF_DROPPABLE = 1 << 4,
  MTCP_BUF_MARKER = 1 << 5,
  MTCP_BUF_RESYNC = 1 << 6,     /* the sink skipped frames just before this one */
} MtcpBufferFlags;

typedef enum {
  MTCP_REFUSE_BAD_MAGIC = 1,
  MTCP_REFUSE_BAD_VERSION = 2,
  MTCP_REFUSE_UNKNOWN_SESSION = 3,
  MTCP_REFUSE_LIMIT = 4,
  MTCP_REFUSE_PROTOCOL = 5,
  MTCP_REFUSE_SHUTDOWN = 6,
  MTCP_REFUSE_AUTH = 7,         /* wrong or missing passphrase: do not retry */
  MTCP_REFUSE_STREAM_ID = 8,    /* not the stream id the listener serves:
                                 * do not retry */
  MTCP_REFUSE_REJECTED = 9,     /* the listener's application turned the
                                 * caller away (caller-connecting) */
} MtcpRefuseCode;

#define MTCP_NONCE_SIZE 32
#define MTCP_MAC_SIZE 32
#define MTCP_SALT_SIZE 16
#define MTCP_CHALLENGE_BODY_SIZE (MTCP_NONCE_SIZE + MTCP_SALT_SIZE + 4)
#define MTCP_AUTH_BODY_SIZE (MTCP_NONCE_SIZE + MTCP_MAC_SIZE)
#define MTCP_PROOF_BODY_SIZE MTCP_MAC_SIZE
#define MTCP_CHALLENGE_FRAME_SIZE (MTCP_HEADER_SIZE + MTCP_CHALLENGE_BODY_SIZE)
#define MTCP_AUTH_FRAME_SIZE (MTCP_HEADER_SIZE + MTCP_AUTH_BODY_SIZE)
#define MTCP_PROOF_FRAME_SIZE (MTCP_HEADER_SIZE + MTCP_PROOF_BODY_SIZE)

#define MTCP_TIME_NONE G_MAXUINT64      /* "no timestamp" on the wire */

typedef struct {
  guint8 type;
  guint8 flags;
  guint32 length;
  guint8 head_size;             /* MTCP_HEADER_SIZE or MTCP_SHORT_HEADER_SIZE */
} MtcpFrameHeader;

/* the stream id a caller names (HELLO's and WELCOME's tail), bytes; it
 * must fit a HELLO in MTCP_MAX_HANDSHAKE_BODY */
#define MTCP_STREAM_ID_MAX 200

typedef struct {
  guint32 magic;
  guint16 version;
  guint8 flags;
  guint8 session_id[MTCP_SESSION_ID_SIZE];
  guint32 latency_ms;           /* the receiver's budget; 0: not said */
  gchar stream_id[MTCP_STREAM_ID_MAX + 1];      /* a calling receiver's;
                                                 * "" = none */
} MtcpHello;

/* The most paths (a calling sink's uplinks) WELCOME and WANT name. */
#define MTCP_MAX_PATHS 8

typedef struct {
  guint8 session_id[MTCP_SESSION_ID_SIZE];
  guint32 connection_id;
  guint32 max_frame;            /* largest body the sink will send */
  gchar stream_id[MTCP_STREAM_ID_MAX + 1];      /* a calling sink's; "" */
  guint8 path;                  /* a calling sink's uplink it dialed from, */
  guint8 n_paths;               /* of these; 0: it does not say */
  guint16 max_connections;      /* the sink's per session; 0: not said */
} MtcpWelcome;

/* receiver -> calling sink: connections wanted in the session, and per
 * path (n_paths 0: the sink spreads them) */
typedef struct {
  guint16 connections;
  guint8 n_paths;
  guint16 per_path[MTCP_MAX_PATHS];
} MtcpWant;

typedef struct {
  guint16 code;
  gchar reason[MTCP_MAX_REASON + 1];
} MtcpRefuse;

/* sink -> receiver: prove the key PBKDF2-HMAC-SHA256 (passphrase, salt,
 * iterations) */
typedef struct {
  guint8 nonce[MTCP_NONCE_SIZE];
  guint8 salt[MTCP_SALT_SIZE];
  guint32 iterations;
} MtcpChallenge;

/* receiver -> sink */
typedef struct {
  guint8 nonce[MTCP_NONCE_SIZE];
  guint8 mac[MTCP_MAC_SIZE];
} MtcpAuth;

/* Fixed part of a BUFFER body; the payload follows it. Times are the
 * sender's running time in ns, MTCP_TIME_NONE when invalid. */
typedef struct {
  guint64 seq;
  guint64 pts;
  guint64 dts;
  guint64 duration;
  guint32 flags;                /* MtcpBufferFlags */
  guint32 payload_size;
} MtcpBufferInfo;
#define MTCP_BUFFER_INFO_SIZE 40

/* What both ends of one connection remember of the last BUFFER_DELTA on it:
 * the next one codes its fields as differences from these. Zeroed when the
 * connection opens. */
typedef struct {
  guint64 next_seq;
  guint64 pts;
  guint64 dts;
  guint64 duration;
  guint8 mask;                  /* which times the last one carried */
  guint32 flags;                /* the last one's buffer flags */
} MtcpBufferDeltaState;

/* the most a BUFFER_DELTA head can take: long header, field mask, four
 * 64-bit varints and the flags */
#define MTCP_BUFFER_DELTA_HEAD_MAX (MTCP_HEADER_SIZE + 1 + 4 * 10 + 5)

typedef struct {
  guint64 first_seq;            /* inclusive */
  guint64 end_seq;              /* exclusive */
} MtcpSkip;

typedef struct {
  guint64 sink_time_us;         /* sink's monotonic clock, echoed in FEEDBACK */
  guint64 stream_bitrate;       /* bit/s at the sink's input (network-friendly:
                                 * the playback rate) */
  guint64 backlog_bytes;        /* bytes queued for this session, not yet handed out */
  guint32 rtt_us;               /* TCP_INFO of this connection at the sink */
  guint32 rttvar_us;
  guint32 snd_cwnd;             /* segments */
  guint32 snd_mss;
  guint32 total_retrans;
  guint32 lost;
  guint64 bytes_acked;
  guint64 unsent_bytes;         /* this connection's, in user space and kernel */
  guint32 flags;                /* MtcpReportFlags (0 from an older sink) */
} MtcpReport;
#define MTCP_REPORT_SIZE 72
/* the first version's REPORT ended at unsent_bytes */
#define MTCP_REPORT_SIZE_MIN 64

typedef enum {
  /* the connection's congestion control sets its rate from a model of the
   * path (bbr), not from loss: ParS's Eq. 19 does not describe it */
  MTCP_REPORT_RATE_IGNORES_LOSS = 1 << 0,
  /* the sink paces this session's stored stream to the receiver's playout
   * buffer (network-friendly) and has more of it to send: what the
   * connections carry is the pace, not what they could */
  MTCP_REPORT_PACED = 1 << 1,
  /* with PACED: the receiver's playout buffer as the sink reckons it (what
   * is on its way counted) is below MTCP_PACED_LOW of what the sink keeps
   * there (the receiver's latency's worth), or at MTCP_PACED_HELD of it or
   * more */
  MTCP_REPORT_PACED_LOW = 1 << 2,
  MTCP_REPORT_PACED_HELD = 1 << 3,
} MtcpReportFlags;
#define MTCP_PACED_LOW 0.5
#define MTCP_PACED_HELD 0.8

typedef struct {
  guint64 highest_in_order;     /* highest seq received with no gap before it, or MTCP_TIME_NONE */
  guint64 buffered_bytes;       /* held in the receiver's reorder buffer */
  guint64 buffered_time;        /* ns of stream time held */
  guint64 echo_sink_time_us;    /* last REPORT's sink_time_us, 0 if none */
  guint64 echo_delay_us;        /* time between that REPORT's arrival and this FEEDBACK */
  guint32 window_bytes;         /* receive window the receiver set, 0 = kernel default */
  guint32 reserved;
  /* the playout buffer: stream released downstream and not yet due
   * (seed 004's b_dst); a first-version receiver's FEEDBACK ends before */
  guint64 playout_bytes;
  guint64 playout_time;         /* ns */
  gboolean playout_known;       /* not on the wire: the tail was there */
} MtcpFeedback;
#define MTCP_FEEDBACK_SIZE 64
/* the first version's FEEDBACK ended at reserved */
#define MTCP_FEEDBACK_SIZE_MIN 48

/* ---- writing: each returns the bytes written into @out ---- */
gsize mtcp_write_header (guint8 out[MTCP_HEADER_SIZE], guint8 type,
    guint8 flags, guint32 length);
gsize mtcp_write_hello (guint8 * out, gsize out_size, const MtcpHello * hello);
gsize mtcp_write_welcome (guint8 * out, gsize out_size,
    const MtcpWelcome * welcome);
gsize mtcp_write_refuse (guint8 * out, gsize out_size, guint16 code,
    const gchar * reason);
/* header + fixed part only; the caller sends payload_size bytes after it */
gsize mtcp_write_buffer_head (guint8 * out, gsize out_size,
    const MtcpBufferInfo * info);
/* the same as a BUFFER_DELTA head, coded against @state, which it advances;
 * @compact (the receiver set HELLO's COMPACT): a short header when the body
 * fits, and the SAME mask (only the seq) for a buffer whose times and
 * flags are the last one's */
gsize mtcp_write_buffer_delta_head (guint8 * out, gsize out_size,
    const MtcpBufferInfo * info, MtcpBufferDeltaState * state,
    gboolean compact);
gsize mtcp_write_caps (guint8 * out, gsize out_size, guint64 seq,
    const gchar * caps_str);
gsize mtcp_write_eos (guint8 * out, gsize out_size, guint64 seq);
gsize mtcp_write_skip (guint8 * out, gsize out_size, const MtcpSkip * skip);
gsize mtcp_write_report (guint8 * out, gsize out_size,
    const MtcpReport * report);
gsize mtcp_write_feedback (guint8 * out, gsize out_size,
    const MtcpFeedback * fb);
/* WANT: the receiver listens, so it asks the sink to dial (or not) until
 * its session has @want->connections (ready and opening), and (when it
 * knows the sink's paths) that many on each path. */
gsize mtcp_write_want (guint8 * out, gsize out_size, const MtcpWant * want);

/* The passphrase handshake (the proofs themselves: mtcpauth.h) */
gsize mtcp_write_challenge (guint8 * out, gsize out_size,
    const MtcpChallenge * challenge);
gsize mtcp_write_auth (guint8 * out, gsize out_size, const MtcpAuth * auth);
gsize mtcp_write_proof (guint8 * out, gsize out_size,
    const guint8 mac[MTCP_MAC_SIZE]);
/* Compares @n bytes in a time that does not depend on where they differ:
 * for MACs, session ids and anything else a peer may guess at. */
gboolean mtcp_bytes_equal_ct (const void *a, const void *b, gsize n);

/* Sizes callers need for their stack buffers. */
#define MTCP_HELLO_FRAME_SIZE    (MTCP_HEADER_SIZE + 28)
#define MTCP_WELCOME_FRAME_SIZE  (MTCP_HEADER_SIZE + 32)
/* with the longest stream id (WELCOME: and its path and limit) */
#define MTCP_HELLO_FRAME_MAX     (MTCP_HELLO_FRAME_SIZE + 2 + MTCP_STREAM_ID_MAX)
#define MTCP_WELCOME_FRAME_MAX   (MTCP_WELCOME_FRAME_SIZE + 2 + \
    MTCP_STREAM_ID_MAX + 2 + 2)
#define MTCP_BUFFER_HEAD_SIZE    (MTCP_HEADER_SIZE + MTCP_BUFFER_INFO_SIZE)
#define MTCP_EOS_FRAME_SIZE      (MTCP_HEADER_SIZE + 8)
#define MTCP_SKIP_FRAME_SIZE     (MTCP_HEADER_SIZE + 16)
#define MTCP_REPORT_FRAME_SIZE   (MTCP_HEADER_SIZE + MTCP_REPORT_SIZE)
#define MTCP_FEEDBACK_FRAME_SIZE (MTCP_HEADER_SIZE + MTCP_FEEDBACK_SIZE)
#define MTCP_WANT_SIZE           4
#define MTCP_WANT_FRAME_SIZE     (MTCP_HEADER_SIZE + MTCP_WANT_SIZE)
#define MTCP_WANT_FRAME_MAX      (MTCP_WANT_FRAME_SIZE + 2 * MTCP_MAX_PATHS)

/* ---- reading ---- */
typedef enum {
  MTCP_PARSE_OK = 0,
  MTCP_PARSE_NEED_MORE,         /* not an error: feed more bytes */
  MTCP_PARSE_ERROR,             /* the peer broke the protocol: close */
} MtcpParseResult;

/* Parse the 8-byte or the 3-byte header (hdr->head_size says which) and
 * check the length against @max_body (and against MTCP_MAX_CONTROL_BODY for
 * control frames, MTCP_MAX_HANDSHAKE_BODY for CHALLENGE, AUTH, PROOF). */
MtcpParseResult mtcp_parse_header (const guint8 * data, gsize size,
    guint32 max_body, MtcpFrameHeader * hdr, gchar ** error);

/* Body parsers: @body/@size is exactly the frame body. */
gboolean mtcp_parse_hello (const guint8 * body, gsize size, MtcpHello * out,
    gchar ** error);
gboolean mtcp_parse_welcome (const guint8 * body, gsize size,
    MtcpWelcome * out, gchar ** error);
gboolean mtcp_parse_refuse (const guint8 * body, gsize size, MtcpRefuse * out,
    gchar ** error);
/* on success *payload points into @body, out->payload_size bytes long */
gboolean mtcp_parse_buffer (const guint8 * body, gsize size,
    MtcpBufferInfo * out, const guint8 ** payload, gchar ** error);
/* @state advances only when the body parses */
gboolean mtcp_parse_buffer_delta (const guint8 * body, gsize size,
    MtcpBufferDeltaState * state, MtcpBufferInfo * out,
    const guint8 ** payload, gchar ** error);
/* *caps_str is newly allocated */
gboolean mtcp_parse_caps (const guint8 * body, gsize size, guint64 * seq,
    gchar ** caps_str, gchar ** error);
gboolean mtcp_parse_eos (const guint8 * body, gsize size, guint64 * seq,
    gchar ** error);
gboolean mtcp_parse_skip (const guint8 * body, gsize size, MtcpSkip * out,
    gchar ** error);
gboolean mtcp_parse_report (const guint8 * body, gsize size,
    MtcpReport * out, gchar ** error);
gboolean mtcp_parse_feedback (const guint8 * body, gsize size,
    MtcpFeedback * out, gchar ** error);
gboolean mtcp_parse_want (const guint8 * body, gsize size, MtcpWant * out,
    gchar ** error);
/* The handshake bodies have exactly their size. The iteration count is
 * not checked here: the receiver holds it to MTCP_AUTH_ITERATIONS_MIN/MAX. */
gboolean mtcp_parse_challenge (const guint8 * body, gsize size,
    MtcpChallenge * out, gchar ** error);
gboolean mtcp_parse_auth (const guint8 * body, gsize size, MtcpAuth * out,
    gchar ** error);
gboolean mtcp_parse_proof (const guint8 * body, gsize size,
    guint8 mac[MTCP_MAC_SIZE], gchar ** error);

/* Incremental reader: feed it whatever the socket gave, take whole frames. */
typedef struct _MtcpFrameReader MtcpFrameReader;

/* Memory follows the bytes that arrived, not the length a header claims:
 * the buffer at most doubles what is held (plus one read chunk, itself no
 * larger than a whole frame of @max_body), and shrinks back once a large
 * frame is gone. */
MtcpFrameReader *mtcp_frame_reader_new (guint32 max_body);
void mtcp_frame_reader_free (MtcpFrameReader * reader);
/* Raise (or lower) the frame size limit, e.g. once a peer is admitted. */
void mtcp_frame_reader_set_max_body (MtcpFrameReader * reader,
    guint32 max_body);
/* Bytes the reader has allocated (for tests of the bound) */
gsize mtcp_frame_reader_allocated (MtcpFrameReader * reader);
/* Where the next socket read should go, and how much fits there. */
guint8 *mtcp_frame_reader_space (MtcpFrameReader * reader, gsize * size);
void mtcp_frame_reader_commit (MtcpFrameReader * reader, gsize n_read);
/* Returns OK with a complete frame (body valid until the next call),
 * NEED_MORE, or ERROR with *error set. Unknown types are returned too:
 * the caller skips them. */
MtcpParseResult mtcp_frame_reader_next (MtcpFrameReader * reader,
    MtcpFrameHeader * hdr, const guint8 ** body, gchar ** error);
/* Bytes received but not yet returned as frames */
gsize mtcp_frame_reader_pending (MtcpFrameReader * reader);

const gchar *mtcp_frame_type_name (guint8 type);
void mtcp_protocol_debug_init (void);
gchar *mtcp_session_id_to_string (const guint8 id[MTCP_SESSION_ID_SIZE]);

G_END_DECLS

#endif
