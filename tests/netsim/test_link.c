/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit test of the link model: exact timings, drop-tail, loss statistics,
 * traces, blackouts. No namespaces needed. */
#include "link.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...) do { \
    if (!(cond)) { failures++; printf ("FAIL %s:%d: ", __FILE__, __LINE__); \
      printf (__VA_ARGS__); printf ("\n"); } \
  } while (0)

#define MS 1000000ull

static void
test_serialization_and_delay (void)
{
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[1250];
  LinkPacket *out;

  p.rate_bps = 10000000;        /* 1250 bytes = 1 ms on the wire */
  p.delay_ns = 20 * MS;
  link_init (&l, &p, 1, 0);
  CHECK (link_enqueue (&l, pkt, sizeof (pkt), 0) == LINK_QUEUED, "queued");
  CHECK (link_enqueue (&l, pkt, sizeof (pkt), 0) == LINK_QUEUED, "queued");
  CHECK (link_next_delivery (&l) == 21 * MS, "first at 21 ms, got %llu",
      (unsigned long long) link_next_delivery (&l));
  CHECK (link_dequeue (&l, 21 * MS - 1) == NULL, "not before");
  out = link_dequeue (&l, 21 * MS);
  CHECK (out && out->len == 1250, "first out");
  free (out);
  /* the second waited for the first to be serialized */
  CHECK (link_next_delivery (&l) == 22 * MS, "second at 22 ms");
  free (link_dequeue (&l, 30 * MS));
  CHECK (l.stats.forwarded_packets == 2, "two forwarded");
  CHECK (l.stats.queue_delay_max_ns == 2 * MS, "sojourn of the second 2 ms");
  link_clear (&l);
}

static void
test_drop_tail (void)
{
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[1000];
  int i, queued = 0;

  p.rate_bps = 8000000;         /* 1 ms per packet */
  p.queue_packets = 10;
  link_init (&l, &p, 1, 0);
  for (i = 0; i < 25; i++)
    queued += link_enqueue (&l, pkt, sizeof (pkt), 0) == LINK_QUEUED;
  CHECK (queued == 10, "10 fit, got %d", queued);
  CHECK (l.stats.dropped_queue == 15, "15 dropped");
  /* what the sender put on the link counts the dropped ones too */
  CHECK (l.stats.offered_bytes == 25 * sizeof (pkt), "offered %llu bytes",
      (unsigned long long) l.stats.offered_bytes);
  /* 3 ms later three have left the queue: three more fit */
  queued = 0;
  for (i = 0; i < 5; i++)
    queued += link_enqueue (&l, pkt, sizeof (pkt), 3 * MS) == LINK_QUEUED;
  CHECK (queued == 3, "3 more fit, got %d", queued);
  link_clear (&l);

  memset (&p, 0, sizeof (p));
  p.rate_bps = 8000000;
  p.queue_bytes = 2500;
  link_init (&l, &p, 1, 0);
  queued = 0;
  for (i = 0; i < 5; i++)
    queued += link_enqueue (&l, pkt, sizeof (pkt), 0) == LINK_QUEUED;
  CHECK (queued == 2, "2 x 1000 bytes fit in 2500, got %d", queued);
  link_clear (&l);
}

static void
test_bernoulli_and_ge_loss (void)
{
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[100];
  int i, n = 200000;
  double sd, pi_bad, expected;

  p.loss = 0.02;
  link_init (&l, &p, 42, 0);
  for (i = 0; i < n; i++) {
    link_enqueue (&l, pkt, sizeof (pkt), 0);
    free (link_dequeue (&l, 0));
  }
  sd = sqrt (n * 0.02 * 0.98);
  CHECK (fabs ((double) l.stats.dropped_loss - n * 0.02) < 3.29 * sd,
      "Bernoulli: %llu lost of %d", (unsigned long long) l.stats.dropped_loss,
      n);
  CHECK (l.stats.offered_bytes - l.stats.forwarded_bytes ==
      l.stats.dropped_loss * sizeof (pkt), "lost bytes: offered %llu, "
      "forwarded %llu", (unsigned long long) l.stats.offered_bytes,
      (unsigned long long) l.stats.forwarded_bytes);
  link_clear (&l);

  memset (&p, 0, sizeof (p));
  p.ge_p_gb = 0.005;
  p.ge_p_bg = 0.1;
  p.ge_loss_bad = 0.8;
  link_init (&l, &p, 43, 0);
  for (i = 0; i < n; i++) {
    link_enqueue (&l, pkt, sizeof (pkt), 0);
    free (link_dequeue (&l, 0));
  }
  pi_bad = 0.005 / 0.105;
  expected = pi_bad * 0.8;
  CHECK (fabs ((double) l.stats.dropped_loss / n - expected) / expected < 0.15,
      "Gilbert-Elliott: %.4f lost, expected %.4f",
      (double) l.stats.dropped_loss / n, expected);
  link_clear (&l);
}

static void
test_trace_and_blackout (void)
{
  uint64_t trace[] = { 0, 0, 5, 10 };     /* period 10 ms */
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[1500];
  uint64_t expect[] = { 0, 0, 5 * MS, 10 * MS, 10 * MS, 10 * MS, 15 * MS };
  int i;

  p.trace_ms = trace;
  p.trace_len = 4;
  link_init (&l, &p, 1, 0);
  for (i = 0; i < 7; i++)
    link_enqueue (&l, pkt, sizeof (pkt), 0);
  for (i = 0; i < 7; i++) {
    LinkPacket *out = link_dequeue (&l, 100 * MS);
    CHECK (out && out->depart_ns == expect[i], "trace packet %d departs at "
        "%llu, expected %llu", i, out ? (unsigned long long) out->depart_ns :
        0ull, (unsigned long long) expect[i]);
    free (out);
  }
  link_clear (&l);

  memset (&p, 0, sizeof (p));
  link_init (&l, &p, 1, 0);
  link_blackout (&l, 3000 * MS);
  CHECK (link_enqueue (&l, pkt, 100, 1000 * MS) == LINK_DROP_BLACKOUT,
      "blackout drops");
  CHECK (link_enqueue (&l, pkt, 100, 3000 * MS) == LINK_QUEUED,
      "after the blackout");
  link_clear (&l);
}

/* nat=1: a TCP SYN (IPv4 and IPv6) is dropped in that direction; the
 * SYN-ACK answering a connection the far end opened, and everything
 * else, pass. */
static void
test_nat (void)
{
  LinkParams p;
  Link l;
  unsigned char v4[40] = { 0x45 }, v6[60] = { 0x60 };

  memset (&p, 0, sizeof (p));
  p.nat = 1;
  link_init (&l, &p, 1, 0);
  v4[9] = 6;                    /* TCP */
  v4[20 + 13] = 0x02;           /* SYN */
  CHECK (link_enqueue (&l, v4, sizeof (v4), 0) == LINK_DROP_SYN,
      "an IPv4 SYN is dropped");
  v4[20 + 13] = 0x12;           /* SYN-ACK */
  CHECK (link_enqueue (&l, v4, sizeof (v4), 0) == LINK_QUEUED,
      "a SYN-ACK passes");
  v4[20 + 13] = 0x10;           /* ACK */
  CHECK (link_enqueue (&l, v4, sizeof (v4), 0) == LINK_QUEUED,
      "an ACK passes");
  v4[9] = 17;                   /* UDP with the same byte */
  v4[20 + 13] = 0x02;
  CHECK (link_enqueue (&l, v4, sizeof (v4), 0) == LINK_QUEUED,
      "UDP passes");
  v6[6] = 6;
  v6[40 + 13] = 0x02;
  CHECK (link_enqueue (&l, v6, sizeof (v6), 0) == LINK_DROP_SYN,
      "an IPv6 SYN is dropped");
  CHECK (l.stats.dropped_syn == 2, "counted");
  link_clear (&l);

  p.nat = 0;
  link_init (&l, &p, 1, 0);
  CHECK (link_enqueue (&l, v6, sizeof (v6), 0) == LINK_QUEUED,
      "without nat a SYN passes");
  link_clear (&l);
}

/* mahimahi semantics: one opportunity carries 1500 bytes, of several small
 * packets or part of a big one; an opportunity that passes while the queue
 * is empty is lost. */
static void
test_trace_byte_budget (void)
{
  uint64_t trace[] = { 1 };     /* one opportunity per ms: 12 Mbit/s */
  uint64_t trace2[] = { 3, 4 };
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[1500];
  size_t sizes[] = { 500, 500, 500, 1000, 1000, 100 };
  uint64_t expect[] = { 1, 1, 1, 2, 3, 3 };
  LinkPacket *out;
  int i;

  p.trace_ms = trace;
  p.trace_len = 1;
  link_init (&l, &p, 1, 0);
  for (i = 0; i < 6; i++)
    link_enqueue (&l, pkt, sizes[i], 0);
  for (i = 0; i < 6; i++) {
    out = link_dequeue (&l, 100 * MS);
    CHECK (out && out->depart_ns == expect[i] * MS, "budget packet %d "
        "departs at %llu ns, expected %llu ms", i,
        out ? (unsigned long long) out->depart_ns : 0ull,
        (unsigned long long) expect[i]);
    free (out);
  }
  /* 3 ms has 900 bytes left but passes unused: the queue is empty then */
  link_enqueue (&l, pkt, 100, 3 * MS + 1);
  out = link_dequeue (&l, 100 * MS);
  CHECK (out && out->depart_ns == 4 * MS, "idle opportunity lost, got %llu",
      out ? (unsigned long long) out->depart_ns : 0ull);
  free (out);
  link_clear (&l);

  /* backlogged full packets: 1000 of them need 1000 opportunities */
  link_init (&l, &p, 1, 0);
  for (i = 0; i < 1000; i++)
    link_enqueue (&l, pkt, 1500, 0);
  CHECK (l.last_depart_ns == 1000 * MS, "1000 packets in 1000 ms, got %llu",
      (unsigned long long) l.last_depart_ns);
  link_clear (&l);

  /* a new trace starts from its beginning when it is switched in */
  link_init (&l, &p, 1, 0);
  for (i = 0; i < 5; i++)
    link_enqueue (&l, pkt, 1500, 0);
  for (i = 0; i < 5; i++)
    free (link_dequeue (&l, 10 * MS));
  p.trace_ms = trace2;
  p.trace_len = 2;
  link_update (&l, &p, 10 * MS);
  link_enqueue (&l, pkt, 1500, 10 * MS);
  link_enqueue (&l, pkt, 1500, 10 * MS);
  link_enqueue (&l, pkt, 1500, 10 * MS);
  CHECK (l.tail && l.tail->depart_ns == 17 * MS,
      "new trace from 10 ms: 13, 14, 17 ms; last at %llu",
      l.tail ? (unsigned long long) l.tail->depart_ns : 0ull);
  link_clear (&l);
}

/* A rate change applies to packets queued after it; the ones before keep
 * the times they got. */
static void
test_rate_change (void)
{
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[1250];

  p.rate_bps = 10000000;        /* 1 ms per 1250 bytes */
  link_init (&l, &p, 1, 0);
  link_enqueue (&l, pkt, sizeof (pkt), 0);
  p.rate_bps = 1000000;         /* 10 ms per 1250 bytes */
  link_update (&l, &p, 0);
  link_enqueue (&l, pkt, sizeof (pkt), 0);
  CHECK (l.head->depart_ns == 1 * MS && l.tail->depart_ns == 11 * MS,
      "1 ms then 10 ms: %llu, %llu", (unsigned long long) l.head->depart_ns,
      (unsigned long long) l.tail->depart_ns);
  link_clear (&l);
}

static void
test_delay_change_keeps_order (void)
{
  LinkParams p = { 0 };
  Link l;
  unsigned char pkt[100];
  LinkPacket *a, *b;

  p.delay_ns = 100 * MS;
  link_init (&l, &p, 1, 0);
  link_enqueue (&l, pkt, 10, 0);
  p.delay_ns = 10 * MS;
  link_update (&l, &p, 1 * MS);
  link_enqueue (&l, pkt, 20, 1 * MS);
  a = link_dequeue (&l, 200 * MS);
  b = link_dequeue (&l, 200 * MS);
  CHECK (a && b && a->len == 10 && b->len == 20 &&
      b->deliver_ns >= a->deliver_ns, "in order after a delay change");
  free (a);
  free (b);
  link_clear (&l);
}

int
main (void)
{
  test_serialization_and_delay ();
  test_drop_tail ();
  test_bernoulli_and_ge_loss ();
  test_trace_and_blackout ();
  test_nat ();
  test_delay_change_keeps_order ();
  test_trace_byte_budget ();
  test_rate_change ();
  printf ("%d failed\n", failures);
  return failures ? 1 : 0;
}
