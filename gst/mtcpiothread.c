/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpiothread.h"

void
mtcp_io_thread_init (MtcpIoThread * io)
{
  io->context = g_main_context_new ();
  io->loop = g_main_loop_new (io->context, FALSE);
  io->thread = NULL;
  /* the thread's push_thread_default () creates GLib's default context
   * (an eventfd) if nobody did: here, so the thread cannot fail on it
   * later (out of descriptors) */
  (void) g_main_context_default ();
}

static gpointer
io_thread_run (gpointer data)
{
  MtcpIoThread *io = data;

  g_main_context_push_thread_default (io->context);
  g_main_loop_run (io->loop);
  g_main_context_pop_thread_default (io->context);
  return NULL;
}

void
mtcp_io_thread_start (MtcpIoThread * io, const gchar * name)
{
  io->thread = g_thread_new (name, io_thread_run, io);
}

static gboolean
quit_loop (gpointer loop)
{
  g_main_loop_quit (loop);
  return G_SOURCE_REMOVE;
}

void
mtcp_io_thread_stop (MtcpIoThread * io)
{
  if (io->context == NULL)
    return;
  if (io->thread) {
    /* through the loop itself: a quit before the thread reached
     * g_main_loop_run () would be forgotten */
    mtcp_io_thread_add_idle (io, G_PRIORITY_HIGH, quit_loop, io->loop);
    g_thread_join (io->thread);
    io->thread = NULL;
  }
}

void
mtcp_io_thread_clear (MtcpIoThread * io)
{
  if (io->context == NULL)
    return;
  g_main_loop_unref (io->loop);
  io->loop = NULL;
  g_main_context_unref (io->context);
  io->context = NULL;
}

void
mtcp_io_thread_add_timeout (MtcpIoThread * io, guint interval_ms,
    GSourceFunc func, gpointer data)
{
  GSource *source = g_timeout_source_new (interval_ms);
  g_source_set_callback (source, func, data, NULL);
  g_source_attach (source, io->context);
  g_source_unref (source);
}

void
mtcp_io_thread_add_idle (MtcpIoThread * io, gint priority, GSourceFunc func,
    gpointer data)
{
  GSource *source = g_idle_source_new ();
  g_source_set_priority (source, priority);
  g_source_set_callback (source, func, data, NULL);
  g_source_attach (source, io->context);
  g_source_unref (source);
}

GSocketAddress *
mtcp_resolve_address (const gchar * host, guint port,
    GCancellable * cancellable, GError ** error)
{
  GInetAddress *addr;
  GSocketAddress *saddr;

  if (host == NULL || *host == '\0') {
    addr = g_inet_address_new_any (G_SOCKET_FAMILY_IPV4);
  } else if (!(addr = g_inet_address_new_from_string (host))) {
    GResolver *resolver = g_resolver_get_default ();
    GList *list = g_resolver_lookup_by_name (resolver, host, cancellable,
        error);
    g_object_unref (resolver);
    if (list == NULL)
      return NULL;
    addr = g_object_ref (list->data);
    g_resolver_free_addresses (list);
  }
  saddr = g_inet_socket_address_new (addr, port);
  g_object_unref (addr);
  return saddr;
}
