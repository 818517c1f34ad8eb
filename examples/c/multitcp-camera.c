/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* A camera application in C: it encodes a test pattern with x264enc into
 * multitcpsink, prints a line a second from the elements' stats messages,
 * and sets its encoder's bitrate itself from the sink's bandwidth
 * estimate (what bitrate-control=encoder does inside the sink, here in
 * the application's hands).
 *
 *   multitcp-camera                      sender and a receiver in this
 *                                        process, on loopback
 *   multitcp-camera --caller HOST PORT   dial a listening receiver
 *                                        (multitcpsrc mode=listener)
 *   --seconds N                          stop after N seconds (0: never)
 *
 * Build: meson builds it as examples/c/multitcp-camera. */

#include <gst/gst.h>
#include <stdlib.h>
#include <string.h>

/* the encoder gets this share of the weakest receiver's estimate: down at
 * once, up by at most STEP_UP a message */
#define SHARE 0.8
#define STEP_UP 1.15
/* a cut leaves room to drain what waits (backlog-time) within this */
#define DRAIN_NS GST_SECOND
#define MIN_KBPS 300
#define MAX_KBPS 4000

typedef struct {
  GMainLoop *loop;
  GstElement *sender, *receiver, *enc, *sink;
  GHashTable *estimates;        /* session id -> Estimate */
  guint lines;
} App;

typedef struct {
  guint64 bps;
  gboolean path_limited;
  guint64 backlog_ns;
} Estimate;

static const Estimate *
weakest_estimate (App * app)
{
  GHashTableIter it;
  gpointer value;
  const Estimate *least = NULL;

  g_hash_table_iter_init (&it, app->estimates);
  while (g_hash_table_iter_next (&it, NULL, &value))
    if (least == NULL || ((const Estimate *) value)->bps < least->bps)
      least = value;
  return least;
}

/* the sink's estimate for one session: follow the weakest receiver; down
 * only on an estimate the path limited (while the stream limits it is the
 * windows' reading, which says little of the path) */
static void
on_estimate (App * app, const GstStructure * s)
{
  const gchar *session = gst_structure_get_string (s, "session");
  guint64 bps = 0, backlog = 0;
  gboolean limited = FALSE;
  const Estimate *weakest;
  Estimate *slot;
  guint now_kbps, want;
  gdouble fair, cut;

  if (session == NULL || !gst_structure_get_uint64 (s, "estimated-bitrate",
          &bps) || bps == 0)
    return;
  gst_structure_get_boolean (s, "path-limited", &limited);
  gst_structure_get_uint64 (s, "backlog-time", &backlog);
  slot = g_new (Estimate, 1);
  slot->bps = bps;
  slot->path_limited = limited;
  slot->backlog_ns = backlog;
  g_hash_table_replace (app->estimates, g_strdup (session), slot);
  weakest = weakest_estimate (app);
  fair = SHARE * weakest->bps / 1000.0;
  /* the share, or less while a backlog needs more room to drain */
  cut = MIN (fair, weakest->bps / 1000.0 * MAX (0.0,
          1.0 - (gdouble) weakest->backlog_ns / DRAIN_NS));
  g_object_get (app->enc, "bitrate", &now_kbps, NULL);
  if (weakest->path_limited && cut < now_kbps * 0.95)
    want = (guint) cut;
  else if (fair > now_kbps * 1.1)
    want = (guint) MIN (fair, now_kbps * STEP_UP);
  else
    return;
  want = CLAMP (want, MIN_KBPS, MAX_KBPS);
  if (want != now_kbps) {
    g_print ("encoder: %u -> %u kbit/s (weakest estimate %" G_GUINT64_FORMAT
        " kbit/s, %s-limited)\n", now_kbps, want, weakest->bps / 1000,
        weakest->path_limited ? "path" : "stream");
    g_object_set (app->enc, "bitrate", want, NULL);
  }
}

/* the receiver's periodic stats: one line */
static void
on_receiver_stats (App * app, const GstStructure * s)
{
  guint64 bitrate = 0, late = 0, skipped = 0;
  guint connections = 0;
  gdouble late_fraction = 0;

  gst_structure_get_uint64 (s, "bitrate", &bitrate);
  gst_structure_get_uint64 (s, "buffers-late", &late);
  gst_structure_get_uint64 (s, "buffers-skipped", &skipped);
  gst_structure_get_uint (s, "n-connections", &connections);
  gst_structure_get_double (s, "late-fraction", &late_fraction);
  g_print ("receiver: %u connections, %" G_GUINT64_FORMAT " kbit/s, %"
      G_GUINT64_FORMAT " late, %" G_GUINT64_FORMAT " skipped (%.1f%%)\n",
      connections, bitrate / 1000, late, skipped, late_fraction * 100);
  app->lines++;
}

static gboolean
on_bus (GstBus * bus, GstMessage * msg, gpointer data)
{
  App *app = data;
  const GstStructure *s = gst_message_get_structure (msg);

  switch (GST_MESSAGE_TYPE (msg)) {
    case GST_MESSAGE_ELEMENT:
      if (gst_structure_has_name (s, "multitcpsink-estimate"))
        on_estimate (app, s);
      else if (gst_structure_has_name (s, "multitcpsrc-stats"))
        on_receiver_stats (app, s);
      break;
    case GST_MESSAGE_ERROR:{
      GError *err = NULL;
      gchar *debug = NULL;
      gst_message_parse_error (msg, &err, &debug);
      g_printerr ("error from %s: %s (%s)\n", GST_OBJECT_NAME (msg->src),
          err->message, debug ? debug : "");
      g_clear_error (&err);
      g_free (debug);
      g_main_loop_quit (app->loop);
      break;
    }
    case GST_MESSAGE_WARNING:{
      GError *err = NULL;
      gst_message_parse_warning (msg, &err, NULL);
      g_printerr ("warning from %s: %s\n", GST_OBJECT_NAME (msg->src),
          err->message);
      g_clear_error (&err);
      break;
    }
    default:
      break;
  }
  return G_SOURCE_CONTINUE;
}

/* the sink's stats property, read once a second: one line */
static gboolean
print_sink_stats (gpointer data)
{
  App *app = data;
  GstStructure *st = NULL;
  guint64 written = 0;
  guint sessions = 0, bitrate = 0;

  g_object_get (app->sink, "stats", &st, NULL);
  if (st == NULL)
    return G_SOURCE_CONTINUE;
  gst_structure_get_uint64 (st, "bytes-written", &written);
  {
    const GValue *v = gst_structure_get_value (st, "sessions");
    if (v && GST_VALUE_HOLDS_ARRAY (v))
      sessions = gst_value_array_get_size (v);
  }
  g_object_get (app->enc, "bitrate", &bitrate, NULL);
  g_print ("sender: %u sessions, %" G_GUINT64_FORMAT " kB written, encoder "
      "%u kbit/s\n", sessions, written / 1000, bitrate);
  gst_structure_free (st);
  return G_SOURCE_CONTINUE;
}

static gboolean
stop (gpointer data)
{
  g_main_loop_quit (((App *) data)->loop);
  return G_SOURCE_REMOVE;
}

int
main (int argc, char **argv)
{
  App app = { 0 };
  const gchar *host = NULL;
  guint port = 0, seconds = 0, i;
  gchar *desc;
  GError *err = NULL;
  GstBus *bus;

  gst_init (&argc, &argv);
  for (i = 1; i < (guint) argc; i++) {
    if (strcmp (argv[i], "--caller") == 0 && i + 2 < (guint) argc) {
      host = argv[++i];
      port = (guint) atoi (argv[++i]);
    } else if (strcmp (argv[i], "--seconds") == 0 && i + 1 < (guint) argc) {
      seconds = (guint) atoi (argv[++i]);
    } else {
      g_printerr ("usage: %s [--caller HOST PORT] [--seconds N]\n", argv[0]);
      return 2;
    }
  }

  desc = g_strdup_printf ("videotestsrc is-live=true pattern=ball ! "
      "video/x-raw,width=640,height=360,framerate=30/1 ! "
      "x264enc name=enc tune=zerolatency key-int-max=30 bitrate=%u "
      "speed-preset=ultrafast ! h264parse config-interval=-1 ! "
      "multitcpsink name=sink %s", MAX_KBPS, host ? "mode=caller" :
      "host=127.0.0.1 port=0");
  app.sender = gst_parse_launch (desc, &err);
  g_free (desc);
  if (app.sender == NULL) {
    g_printerr ("sender: %s\n", err->message);
    return 1;
  }
  app.enc = gst_bin_get_by_name (GST_BIN (app.sender), "enc");
  app.sink = gst_bin_get_by_name (GST_BIN (app.sender), "sink");
  if (host)
    g_object_set (app.sink, "host", host, "port", port, NULL);
  app.loop = g_main_loop_new (NULL, FALSE);
  app.estimates = g_hash_table_new_full (g_str_hash, g_str_equal, g_free,
      g_free);
  bus = gst_element_get_bus (app.sender);
  gst_bus_add_watch (bus, on_bus, &app);
  gst_object_unref (bus);
  if (gst_element_set_state (app.sender, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE) {
    g_printerr ("the sender did not start\n");
    return 1;
  }

  if (host == NULL) {
    /* a receiver on loopback, printing its stats once a second */
    g_object_get (app.sink, "current-port", &port, NULL);
    desc = g_strdup_printf ("multitcpsrc host=127.0.0.1 port=%u "
        "latency=1000 stats-interval=1000 ! fakesink sync=false", port);
    app.receiver = gst_parse_launch (desc, &err);
    g_free (desc);
    if (app.receiver == NULL) {
      g_printerr ("receiver: %s\n", err->message);
      return 1;
    }
    bus = gst_element_get_bus (app.receiver);
    gst_bus_add_watch (bus, on_bus, &app);
    gst_object_unref (bus);
    gst_element_set_state (app.receiver, GST_STATE_PLAYING);
  }

  g_timeout_add_seconds (1, print_sink_stats, &app);
  if (seconds)
    g_timeout_add_seconds (seconds, stop, &app);
  g_main_loop_run (app.loop);

  if (app.receiver) {
    gst_element_set_state (app.receiver, GST_STATE_NULL);
    gst_object_unref (app.receiver);
  }
  gst_element_set_state (app.sender, GST_STATE_NULL);
  gst_object_unref (app.enc);
  gst_object_unref (app.sink);
  gst_object_unref (app.sender);
  g_hash_table_unref (app.estimates);
  g_main_loop_unref (app.loop);
  /* the test suite reads this: the receiver printed its stats */
  g_print ("done: %u receiver lines\n", app.lines);
  return host == NULL && app.lines == 0 ? 1 : 0;
}
