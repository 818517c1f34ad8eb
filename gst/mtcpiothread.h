/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The I/O thread both transports run their sockets on: a GMainContext of
 * their own, iterated by one thread, plus the address lookup they share. */
#ifndef __MTCP_IO_THREAD_H__
#define __MTCP_IO_THREAD_H__

#include <gio/gio.h>

G_BEGIN_DECLS

typedef struct {
  GMainContext *context;
  GMainLoop *loop;
  GThread *thread;
} MtcpIoThread;

/* A context to attach sources to; nothing runs until start. */
void mtcp_io_thread_init (MtcpIoThread * io);
void mtcp_io_thread_start (MtcpIoThread * io, const gchar * name);
/* Stops the loop (also one not yet running) and joins the thread; the
 * context stays until clear, so sources can still be taken down. */
void mtcp_io_thread_stop (MtcpIoThread * io);
void mtcp_io_thread_clear (MtcpIoThread * io);

/* Sources in the thread's context; safe from any thread. */
void mtcp_io_thread_add_timeout (MtcpIoThread * io, guint interval_ms,
    GSourceFunc func, gpointer data);
void mtcp_io_thread_add_idle (MtcpIoThread * io, gint priority,
    GSourceFunc func, gpointer data);

/* @host: a literal address or a name; NULL or "" = every IPv4 interface. */
GSocketAddress *mtcp_resolve_address (const gchar * host, guint port,
    GCancellable * cancellable, GError ** error);

G_END_DECLS

#endif
