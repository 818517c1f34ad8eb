/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Makes TCP connections for either end, in either role: listens and
 * accepts, or dials. Which end dials is a deployment's choice (a camera
 * behind NAT must dial out, an ingest server listens); what a connection
 * then carries is not: the receiver speaks first (HELLO), the sender
 * answers, whoever dialed. So the transports hand every connected socket
 * on to the same handshake, accepted or dialed.
 *
 * A connector runs on its owner's I/O context (GMainContext) and calls
 * back from it with no lock of its own held; the owner serialises the
 * other calls (it calls them from that context, or before it runs). */
#ifndef __MTCP_CONNECTOR_H__
#define __MTCP_CONNECTOR_H__

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct _MtcpConnector MtcpConnector;

/* The most uplinks a dialer spreads over (modems bonded at a camera). */
#define MTCP_MAX_UPLINKS 8

/* A connection is up: the callee takes @socket (a reference). @uplink:
 * the dialer's uplink it went out on (0 for a listener, or a dialer
 * without uplinks). */
typedef void (*MtcpConnectorConnected) (GSocket * socket, guint uplink,
    gpointer user_data);
/* A dial on @uplink failed (@exhausted FALSE), or accept () ran out of
 * descriptors or memory and the listener now rests for @backoff_ms
 * (@exhausted TRUE). */
typedef void (*MtcpConnectorFailed) (const GError * error, gboolean exhausted,
    guint backoff_ms, guint uplink, gpointer user_data);

/* Binds and listens now, so that the port (0: any free one) is known. */
MtcpConnector *mtcp_connector_new_listener (const gchar * host, guint port,
    GError ** error);
/* Dials @host:@port (resolved now, blocking) when asked to. */
MtcpConnector *mtcp_connector_new_dialer (const gchar * host, guint port,
    guint connect_timeout_ms, GCancellable * cancellable, GError ** error);
void mtcp_connector_free (MtcpConnector * connector);

/* Dialer, before start: dial from these uplinks (comma-separated; either
 * list may be NULL, both given pair up in order): @local_addresses binds
 * each dial to an address (the kernel routes by destination unless the
 * system has source rules), @interfaces binds it to a device
 * (SO_BINDTODEVICE: out of that device whatever the routes say; needs
 * CAP_NET_RAW before Linux 5.7). FALSE with @error for an address of
 * another family than the one dialed, a device that does not exist, more
 * than MTCP_MAX_UPLINKS, or lists of different lengths. */
gboolean mtcp_connector_set_uplinks (MtcpConnector * connector,
    const gchar * local_addresses, const gchar * interfaces, GError ** error);
/* How many uplinks (1 without any set: the kernel's choice). */
/* a property's comma-separated list of addresses or interfaces: its
 * trimmed, non-empty items (g_free'd with the array) */
GPtrArray *mtcp_connector_split_list (const gchar * list);

guint mtcp_connector_n_uplinks (const MtcpConnector * connector);
/* "wwan0", "10.0.1.2", "wwan0/10.0.1.2", or "default". */
const gchar *mtcp_connector_uplink_name (const MtcpConnector * connector,
    guint uplink);

gboolean mtcp_connector_is_listener (const MtcpConnector * connector);
/* The port listened on, or dialed. */
guint mtcp_connector_get_port (const MtcpConnector * connector);
/* Dialer: the address it dials (resolved at new), else NULL. */
GSocketAddress *mtcp_connector_get_address (const MtcpConnector * connector);
/* "host:port" of what it dials or listens on, for messages. */
const gchar *mtcp_connector_describe (const MtcpConnector * connector);

/* From now on, on @context: a listener accepts, a dialer dials on
 * mtcp_connector_dial (). */
void mtcp_connector_start (MtcpConnector * connector, GMainContext * context,
    MtcpConnectorConnected connected, MtcpConnectorFailed failed,
    gpointer user_data);
/* Dialer: one more connection from @uplink, without blocking; it comes to
 * connected or failed. */
void mtcp_connector_dial (MtcpConnector * connector, guint uplink);
/* Dialer: how many dials from @uplink (G_MAXUINT: from any) have not
 * ended yet. */
guint mtcp_connector_dialing (const MtcpConnector * connector, guint uplink);
/* SYNs the dials have sent, first ones and fresh ones alike. */
guint64 mtcp_connector_syns (const MtcpConnector * connector);
/* No more callbacks; dials in progress are abandoned, the listener
 * closed. */
void mtcp_connector_stop (MtcpConnector * connector);

G_END_DECLS

#endif
