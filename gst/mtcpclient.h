/* The source's transport: opens a session of N TCP connections to a
 * multitcpsink, reads frames on an I/O thread, puts them into the reorder
 * buffer with a playback deadline, sends feedback, and hands items out in
 * order. multitcpsrc is a thin element over it.
 *
 * Local times are CLOCK_MONOTONIC in ns (mtcp_client_now); a buffer's PTS
 * and DTS leave here as the local time the sender's running time maps to,
 * so the element only shifts them into running time. */
#ifndef __MTCP_CLIENT_H__
#define __MTCP_CLIENT_H__

#include <gst/gst.h>
#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _MtcpClient MtcpClient;

typedef struct {
  gchar *host;
  guint port;
  guint connections;
  GstClockTime latency;         /* playback deadline after the mapped time */
  guint timeout_s;              /* connect and idle timeout, 0 = none */
  guint32 max_frame;
  guint feedback_interval_ms;
  guint stats_interval_ms;      /* 0 = no periodic stats callback */
} MtcpClientConfig;

typedef enum {
  MTCP_ITEM_BUFFER,
  MTCP_ITEM_CAPS,
  MTCP_ITEM_EOS,
} MtcpItemKind;

typedef struct {
  MtcpItemKind kind;
  guint64 seq;
  GstBuffer *buffer;            /* BUFFER: owned; PTS/DTS in local time */
  GstCaps *caps;                /* CAPS: owned */
  gboolean discont;             /* sequence numbers were skipped before it */
} MtcpItem;

void mtcp_item_clear (MtcpItem * item);

typedef enum {
  MTCP_POP_OK,
  MTCP_POP_FLUSHING,
  MTCP_POP_ERROR,
} MtcpPopResult;

/* Periodic stats, from the I/O thread; takes ownership of @stats. */
typedef void (*MtcpClientStatsFunc) (GstStructure * stats, gpointer user_data);

MtcpClient *mtcp_client_new (const MtcpClientConfig * config,
    MtcpClientStatsFunc stats_func, gpointer user_data);
void mtcp_client_free (MtcpClient * client);

/* Connects the first connection and joins a new session (blocking, honours
 * @cancellable and the timeout), then opens the others in the background. */
gboolean mtcp_client_start (MtcpClient * client, GCancellable * cancellable,
    GError ** error);
void mtcp_client_stop (MtcpClient * client);

/* Blocks until the next item is due, flushing, or a fatal error. */
MtcpPopResult mtcp_client_pop (MtcpClient * client, MtcpItem * item,
    GError ** error);
void mtcp_client_set_flushing (MtcpClient * client, gboolean flushing);

GstStructure *mtcp_client_get_stats (MtcpClient * client);
const gchar *mtcp_client_get_session_id (MtcpClient * client);

GstClockTime mtcp_client_now (void);

G_END_DECLS

#endif
