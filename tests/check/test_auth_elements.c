/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The passphrase proven both ways: multitcpsrc against hand-driven sinks
 * that skip their proof or get it wrong, and a raw receiver against
 * multitcpsink. */
#include <gst/check/gstcheck.h>
#include <gio/gio.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <string.h>

#include "mtcpprotocol.h"
#include "mtcpauth.h"
#include "mtcptestutil.h"

#define PASSPHRASE "open sesame"

typedef enum {
  FAKE_NO_CHALLENGE,            /* WELCOME at once, as a sink without one */
  FAKE_WRONG_PROOF,             /* checks AUTH, then a PROOF of garbage */
  FAKE_PROOF_OTHER_KEY,         /* a PROOF made with another passphrase */
  FAKE_WEAK_ROUNDS,             /* asks for too few PBKDF2 rounds */
  FAKE_RIGHT,                   /* the whole handshake, right */
  FAKE_HANG_UP,                 /* CHALLENGE, then closes: a sink whose
                                 * handshake timeout ran out */
} FakeMode;

typedef struct {
  GSocket *listener;
  guint port;
  FakeMode mode;
  gboolean auth_ok;             /* the receiver's AUTH was right */
  gboolean got_auth;            /* any AUTH came */
  gboolean salt_set;            /* one salt for every connection, as a sink */
  guint8 salt[MTCP_SALT_SIZE];
} FakeSink;

static void
send_all (GSocket * sock, const guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_send (sock, (const gchar *) data + done, size - done,
        NULL, NULL);
    fail_unless (n > 0);
    done += n;
  }
}

/* FALSE at EOF or error */
static gboolean
recv_all (GSocket * sock, guint8 * data, gsize size)
{
  gsize done = 0;
  while (done < size) {
    gssize n = g_socket_receive (sock, (gchar *) data + done, size - done,
        NULL, NULL);
    if (n <= 0)
      return FALSE;
    done += n;
  }
  return TRUE;
}

/* One frame with a long header into @body (at most 256 bytes) */
static gboolean
recv_frame (GSocket * sock, MtcpFrameHeader * hdr, guint8 * body)
{
  guint8 head[MTCP_HEADER_SIZE];

  if (!recv_all (sock, head, sizeof (head)))
    return FALSE;
  fail_unless_equals_int (mtcp_parse_header (head, sizeof (head),
          MTCP_MAX_HANDSHAKE_BODY, hdr, NULL), MTCP_PARSE_OK);
  fail_unless_equals_int (hdr->head_size, MTCP_HEADER_SIZE);
  return recv_all (sock, body, hdr->length);
}

static gpointer
fake_sink_run (gpointer data)
{
  FakeSink *fs = data;
  GSocket *sock = g_socket_accept (fs->listener, NULL, NULL);
  guint8 body[256], out[128];
  MtcpFrameHeader hdr;
  MtcpHello hello = { 0, };
  MtcpWelcome welcome = { {0}, };
  MtcpChallenge ch;
  MtcpAuthKey key;
  MtcpAuth auth;
  guint8 mac[MTCP_MAC_SIZE];

  fail_unless (sock != NULL);
  g_socket_set_timeout (sock, 10);
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_HELLO);
  fail_unless (mtcp_parse_hello (body, hdr.length, &hello, NULL));
  fail_unless (hello.flags & MTCP_HELLO_FLAG_MUTUAL_AUTH);

  if (fs->mode != FAKE_NO_CHALLENGE) {
    fail_unless (mtcp_random_bytes (ch.nonce, MTCP_NONCE_SIZE, NULL));
    if (!fs->salt_set)
      fail_unless (mtcp_random_bytes (fs->salt, MTCP_SALT_SIZE, NULL));
    fs->salt_set = TRUE;
    memcpy (ch.salt, fs->salt, MTCP_SALT_SIZE);
    ch.iterations = fs->mode == FAKE_WEAK_ROUNDS ?
        MTCP_AUTH_ITERATIONS_MIN - 1 : MTCP_AUTH_ITERATIONS_MIN;
    send_all (sock, out, mtcp_write_challenge (out, sizeof (out), &ch));
    if (fs->mode == FAKE_HANG_UP) {
      g_object_unref (sock);
      return NULL;
    }
    fs->got_auth = recv_frame (sock, &hdr, body);
    if (!fs->got_auth)
      return sock;              /* the receiver hung up: what we want */
    fail_unless_equals_int (hdr.type, MTCP_FRAME_AUTH);
    fail_unless (mtcp_parse_auth (body, hdr.length, &auth, NULL));
    mtcp_auth_key_derive (&key, PASSPHRASE, ch.salt, ch.iterations);
    mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ch.nonce, auth.nonce,
        &hello, mac);
    fs->auth_ok = mtcp_bytes_equal_ct (mac, auth.mac, MTCP_MAC_SIZE);
    if (fs->mode == FAKE_WRONG_PROOF) {
      memset (mac, 0x42, sizeof (mac));
    } else if (fs->mode == FAKE_PROOF_OTHER_KEY) {
      mtcp_auth_key_derive (&key, PASSPHRASE "!", ch.salt, ch.iterations);
      mtcp_auth_proof (&key, MTCP_AUTH_ROLE_SINK, ch.nonce, auth.nonce,
          &hello, mac);
    } else {
      mtcp_auth_proof (&key, MTCP_AUTH_ROLE_SINK, ch.nonce, auth.nonce,
          &hello, mac);
    }
    send_all (sock, out, mtcp_write_proof (out, sizeof (out), mac));
  }
  memset (welcome.session_id, 0x5a, MTCP_SESSION_ID_SIZE);
  welcome.connection_id = 0;
  welcome.max_frame = MTCP_MAX_FRAME_DEFAULT;
  send_all (sock, out, mtcp_write_welcome (out, sizeof (out), &welcome));
  return sock;
}

static void
fake_sink_init (FakeSink * fs, FakeMode mode)
{
  memset (fs, 0, sizeof (*fs));
  fs->mode = mode;
  fs->listener = loopback_listen (&fs->port);
}

static GstElement *
receiver_pipeline (guint port, const gchar * props)
{
  gchar *desc = g_strdup_printf ("multitcpsrc name=src host=127.0.0.1 "
      "port=%u connections=1 latency=300 %s ! appsink name=out sync=false",
      port, props);
  GstElement *pipeline = gst_parse_launch (desc, NULL);

  g_free (desc);
  fail_unless (pipeline != NULL);
  return pipeline;
}

/* The receiver refuses the fake sink: start fails with a permission error
 * whose text has @what in it. */
static void
check_refused (FakeMode mode, const gchar * what, gboolean expect_auth)
{
  FakeSink fs;
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *m;
  GError *err = NULL;
  gchar *debug = NULL;
  GThread *thread;
  GSocket *sock;

  fake_sink_init (&fs, mode);
  pipeline = receiver_pipeline (fs.port, "passphrase=\"" PASSPHRASE "\"");
  bus = gst_element_get_bus (pipeline);
  thread = g_thread_new ("fake-sink", fake_sink_run, &fs);
  fail_unless_equals_int (gst_element_set_state (pipeline, GST_STATE_PLAYING),
      GST_STATE_CHANGE_FAILURE);
  sock = g_thread_join (thread);
  m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL);
  gst_message_parse_error (m, &err, &debug);
  GST_INFO ("refused: %s (%s)", err->message, debug);
  fail_unless (strstr (debug ? debug : "", what) != NULL ||
      strstr (err->message, what) != NULL, "%s / %s", err->message, debug);
  fail_unless_equals_int (fs.got_auth, expect_auth);
  if (expect_auth)
    fail_unless (fs.auth_ok);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (m);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_object_unref (sock);
  g_object_unref (fs.listener);
}

GST_START_TEST (test_receiver_refuses_sink_that_never_challenges)
{
  check_refused (FAKE_NO_CHALLENGE, "never sent a CHALLENGE", FALSE);
}

GST_END_TEST;

GST_START_TEST (test_receiver_refuses_wrong_sink_proof)
{
  check_refused (FAKE_WRONG_PROOF, "proof is wrong", TRUE);
  check_refused (FAKE_PROOF_OTHER_KEY, "proof is wrong", TRUE);
}

GST_END_TEST;

GST_START_TEST (test_receiver_refuses_weak_rounds)
{
  /* and gives no proof that could be brute-forced cheaply */
  check_refused (FAKE_WEAK_ROUNDS, "rounds", FALSE);
}

GST_END_TEST;

GST_START_TEST (test_receiver_accepts_right_proof)
{
  FakeSink fs;
  GstElement *pipeline, *appsink;
  GThread *thread;
  GSocket *sock;
  guint8 out[MTCP_BUFFER_HEAD_SIZE + 100];
  MtcpBufferInfo info = { 0, };
  GstSample *sample;
  gsize n;

  fake_sink_init (&fs, FAKE_RIGHT);
  pipeline = receiver_pipeline (fs.port, "passphrase=\"" PASSPHRASE "\"");
  appsink = gst_bin_get_by_name (GST_BIN (pipeline), "out");
  thread = g_thread_new ("fake-sink", fake_sink_run, &fs);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  sock = g_thread_join (thread);
  fail_unless (fs.auth_ok);

  n = mtcp_write_caps (out, sizeof (out), 0, "application/x-test");
  send_all (sock, out, n);
  info.seq = 1;
  info.pts = info.dts = 0;
  info.duration = 33 * GST_MSECOND;
  info.payload_size = 100;
  n = mtcp_write_buffer_head (out, sizeof (out), &info);
  memset (out + n, 0x77, 100);
  send_all (sock, out, n + 100);
  sample = gst_app_sink_try_pull_sample (GST_APP_SINK (appsink),
      10 * GST_SECOND);
  fail_unless (sample != NULL);
  gst_sample_unref (sample);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (appsink);
  gst_object_unref (pipeline);
  g_object_unref (sock);
  g_object_unref (fs.listener);
}

GST_END_TEST;

static gpointer
fake_sink_hang_up_then_right (gpointer data)
{
  FakeSink *fs = data;

  fail_unless (fake_sink_run (fs) == NULL);
  fs->mode = FAKE_RIGHT;
  return fake_sink_run (fs);
}

/* A sink that hangs up while the receiver derives its key (its handshake
 * timeout, on a slow CPU or under sanitizers): the receiver tries once
 * more with the key it kept for that salt, and joins. */
GST_START_TEST (test_receiver_retries_after_slow_key_derivation)
{
  FakeSink fs;
  GstElement *pipeline;
  GThread *thread;
  GSocket *sock;

  fake_sink_init (&fs, FAKE_HANG_UP);
  pipeline = receiver_pipeline (fs.port, "passphrase=\"" PASSPHRASE "\"");
  thread = g_thread_new ("fake-sink", fake_sink_hang_up_then_right, &fs);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  sock = g_thread_join (thread);
  fail_unless (sock != NULL);
  fail_unless (fs.auth_ok);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (pipeline);
  g_object_unref (sock);
  g_object_unref (fs.listener);
}

GST_END_TEST;

/* The same on a later connection (the I/O thread's handshake): an error,
 * not a retry storm. */
GST_START_TEST (test_receiver_refuses_unproven_second_connection)
{
  FakeSink fs;
  GstElement *pipeline;
  GstBus *bus;
  GstMessage *m;
  GError *err = NULL;
  gchar *debug = NULL;
  GThread *thread;
  GSocket *first, *second;

  fake_sink_init (&fs, FAKE_RIGHT);
  pipeline = receiver_pipeline (fs.port, "connections=2 passphrase=\""
      PASSPHRASE "\"");
  bus = gst_element_get_bus (pipeline);
  thread = g_thread_new ("fake-sink", fake_sink_run, &fs);
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  first = g_thread_join (thread);
  fail_unless (fs.auth_ok);
  fs.mode = FAKE_NO_CHALLENGE;
  second = fake_sink_run (&fs);
  m = gst_bus_timed_pop_filtered (bus, 5 * GST_SECOND, GST_MESSAGE_ERROR);
  fail_unless (m != NULL, "no error for a sink that did not prove itself");
  gst_message_parse_error (m, &err, &debug);
  GST_INFO ("refused: %s (%s)", err->message, debug);
  fail_unless (strstr (err->message, "never sent a CHALLENGE") != NULL ||
      strstr (debug ? debug : "", "never sent a CHALLENGE") != NULL,
      "%s / %s", err->message, debug);
  g_error_free (err);
  g_free (debug);
  gst_message_unref (m);
  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (bus);
  gst_object_unref (pipeline);
  g_object_unref (first);
  g_object_unref (second);
  g_object_unref (fs.listener);
}

GST_END_TEST;

/* ---- a raw receiver against multitcpsink ---- */

static void
raw_hello (GSocket * sock, guint8 flags, MtcpHello * hello)
{
  guint8 out[MTCP_HELLO_FRAME_SIZE];

  memset (hello, 0, sizeof (*hello));
  hello->magic = MTCP_MAGIC;
  hello->version = MTCP_VERSION;
  hello->flags = flags;
  hello->latency_ms = 500;
  send_all (sock, out, mtcp_write_hello (out, sizeof (out), hello));
}

GST_START_TEST (test_sink_proves_itself)
{
  GstElement *pipeline, *sink;
  GSocket *sock;
  guint8 body[256], out[128], mac[MTCP_MAC_SIZE];
  MtcpFrameHeader hdr;
  MtcpHello hello = { 0, };
  MtcpChallenge ch, ch2;
  MtcpAuth auth;
  MtcpAuthKey key;
  MtcpRefuse refuse;
  MtcpWelcome welcome = { {0}, };
  gint port = 0;

  pipeline = gst_parse_launch ("appsrc is-live=true format=time ! "
      "multitcpsink name=sink host=127.0.0.1 port=0 sync=false "
      "passphrase=\"" PASSPHRASE "\"", NULL);
  fail_unless (pipeline != NULL);
  sink = gst_bin_get_by_name (GST_BIN (pipeline), "sink");
  fail_if (gst_element_set_state (pipeline, GST_STATE_PLAYING) ==
      GST_STATE_CHANGE_FAILURE);
  g_object_get (sink, "current-port", &port, NULL);
  fail_unless (port > 0);

  /* a receiver of the one-way handshake is told why */
  sock = raw_connect (port);
  raw_hello (sock, MTCP_HELLO_FLAG_BUFFER_DELTA, &hello);
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_REFUSE);
  fail_unless (mtcp_parse_refuse (body, hdr.length, &refuse, NULL));
  fail_unless_equals_int (refuse.code, MTCP_REFUSE_AUTH);
  g_object_unref (sock);

  /* the right proof: the sink's PROOF checks out, then WELCOME */
  sock = raw_connect (port);
  raw_hello (sock, MTCP_HELLO_FLAG_MUTUAL_AUTH, &hello);
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_CHALLENGE);
  fail_unless (mtcp_parse_challenge (body, hdr.length, &ch, NULL));
  fail_unless_equals_int (ch.iterations, MTCP_AUTH_ITERATIONS_DEFAULT);
  mtcp_auth_key_derive (&key, PASSPHRASE, ch.salt, ch.iterations);
  fail_unless (mtcp_random_bytes (auth.nonce, MTCP_NONCE_SIZE, NULL));
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_RECEIVER, ch.nonce, auth.nonce,
      &hello, auth.mac);
  send_all (sock, out, mtcp_write_auth (out, sizeof (out), &auth));
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_PROOF);
  fail_unless (mtcp_parse_proof (body, hdr.length, mac, NULL));
  mtcp_auth_proof (&key, MTCP_AUTH_ROLE_SINK, ch.nonce, auth.nonce, &hello,
      auth.mac);
  fail_unless (mtcp_bytes_equal_ct (mac, auth.mac, MTCP_MAC_SIZE));
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_WELCOME);
  fail_unless (mtcp_parse_welcome (body, hdr.length, &welcome, NULL));
  g_object_unref (sock);

  /* same salt for everyone (the sink derived once), a fresh nonce each */
  sock = raw_connect (port);
  raw_hello (sock, MTCP_HELLO_FLAG_MUTUAL_AUTH, &hello);
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless (mtcp_parse_challenge (body, hdr.length, &ch2, NULL));
  fail_unless (memcmp (ch.salt, ch2.salt, MTCP_SALT_SIZE) == 0);
  fail_if (memcmp (ch.nonce, ch2.nonce, MTCP_NONCE_SIZE) == 0);
  /* the receiver's proof replayed from the other connection fails */
  send_all (sock, out, mtcp_write_auth (out, sizeof (out), &auth));
  fail_unless (recv_frame (sock, &hdr, body));
  fail_unless_equals_int (hdr.type, MTCP_FRAME_REFUSE);
  fail_unless (mtcp_parse_refuse (body, hdr.length, &refuse, NULL));
  fail_unless_equals_int (refuse.code, MTCP_REFUSE_AUTH);
  g_object_unref (sock);

  gst_element_set_state (pipeline, GST_STATE_NULL);
  gst_object_unref (sink);
  gst_object_unref (pipeline);
}

GST_END_TEST;

GST_START_TEST (test_passphrase_write_only)
{
  const gchar *names[] = { "multitcpsink", "multitcpsrc" };
  guint i;

  for (i = 0; i < G_N_ELEMENTS (names); i++) {
    GstElement *e = gst_element_factory_make (names[i], NULL);
    GParamSpec *pspec;

    fail_unless (e != NULL);
    pspec = g_object_class_find_property (G_OBJECT_GET_CLASS (e),
        "passphrase");
    fail_unless (pspec != NULL);
    fail_unless (pspec->flags & G_PARAM_WRITABLE);
    fail_if (pspec->flags & G_PARAM_READABLE, "%s shows its passphrase",
        names[i]);
    g_object_set (e, "passphrase", "secret", NULL);
    gst_object_unref (e);
  }
}

GST_END_TEST;

static Suite *
auth_elements_suite (void)
{
  Suite *s = suite_create ("auth_elements");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_passphrase_write_only);
  tcase_add_test (tc, test_receiver_refuses_sink_that_never_challenges);
  tcase_add_test (tc, test_receiver_refuses_wrong_sink_proof);
  tcase_add_test (tc, test_receiver_refuses_weak_rounds);
  tcase_add_test (tc, test_receiver_accepts_right_proof);
  tcase_add_test (tc, test_receiver_retries_after_slow_key_derivation);
  tcase_add_test (tc, test_receiver_refuses_unproven_second_connection);
  tcase_add_test (tc, test_sink_proves_itself);
  return s;
}

GST_CHECK_MAIN (auth_elements);
