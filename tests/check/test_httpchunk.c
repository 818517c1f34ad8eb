/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* Unit tests of the chunk a parallel HTTP download reassembles and the
 * byte ranges its parts ask for (gst/mtcphttpchunk.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include <gst/check/gstcheck.h>
#include <string.h>

#include "mtcphttpchunk.h"

/* every byte of [start, end) in exactly one part, in order */
static void
check_split (guint64 start, guint64 end, guint n)
{
  MtcpByteRange parts[MTCP_HTTP_MAX_PARTS];
  guint got = mtcp_http_split (start, end, n, parts), i;
  guint64 at = start, least = G_MAXUINT64, most = 0;

  fail_unless_equals_int (got, MIN (MIN (n, MTCP_HTTP_MAX_PARTS), end - start));
  for (i = 0; i < got; i++) {
    guint64 size = parts[i].last - parts[i].first + 1;
    fail_unless (parts[i].first == at, "part %u starts at %" G_GUINT64_FORMAT
        " not %" G_GUINT64_FORMAT, i, parts[i].first, at);
    fail_unless (parts[i].last >= parts[i].first);
    at = parts[i].last + 1;
    least = MIN (least, size);
    most = MAX (most, size);
  }
  fail_unless (at == MAX (end, start));
  if (got)
    fail_unless (most - least <= 1);
}

GST_START_TEST (test_split_covers_every_byte)
{
  guint n;
  MtcpByteRange parts[MTCP_HTTP_MAX_PARTS];
  gchar *h;

  for (n = 1; n <= 8; n++) {
    check_split (0, 1000000, n);
    check_split (0, 1000003, n);        /* not divisible by n */
    check_split (777, 777 + 5, n);      /* fewer bytes than n */
    check_split (10, 11, n);
  }
  check_split (0, 100, 40);     /* more than the most parts */
  fail_unless_equals_int (mtcp_http_split (5, 5, 4, parts), 0);
  fail_unless_equals_int (mtcp_http_split (9, 5, 4, parts), 0);
  fail_unless_equals_int (mtcp_http_split (0, 10, 3, parts), 3);
  h = mtcp_http_range_header (&parts[1]);
  fail_unless_equals_string (h, "bytes=4-6");
  g_free (h);
  fail_unless (parts[0].last == 3 && parts[2].first == 7 && parts[2].last == 9);
}

GST_END_TEST;

GST_START_TEST (test_content_range)
{
  MtcpByteRange r;
  guint64 total;

  fail_unless (mtcp_http_parse_content_range ("bytes 0-499/1234", &r, &total));
  fail_unless (r.first == 0 && r.last == 499 && total == 1234);
  fail_unless (mtcp_http_parse_content_range ("bytes 10-19/*", &r, &total));
  fail_unless (r.first == 10 && r.last == 19 && total == G_MAXUINT64);
  fail_unless (mtcp_http_parse_content_range ("bytes */1234", &r, &total));
  fail_unless (r.first > r.last && total == 1234);
  fail_unless (mtcp_http_parse_content_range ("BYTES 0-0/1", NULL, &total));
  /* what a server must not send, and what a hostile one might */
  fail_if (mtcp_http_parse_content_range (NULL, &r, &total));
  fail_if (mtcp_http_parse_content_range ("", &r, &total));
  fail_if (mtcp_http_parse_content_range ("bytes 5-4/10", &r, &total));
  fail_if (mtcp_http_parse_content_range ("bytes 0-10/10", &r, &total));
  fail_if (mtcp_http_parse_content_range ("bytes 0-9/10x", &r, &total));
  fail_if (mtcp_http_parse_content_range ("bytes -1-9/10", &r, &total));
  fail_if (mtcp_http_parse_content_range ("items 0-9/10", &r, &total));
  fail_if (mtcp_http_parse_content_range ("bytes 0-9", &r, &total));
  fail_if (mtcp_http_parse_content_range
      ("bytes 0-99999999999999999999/1", &r, &total));
}

GST_END_TEST;

/* parts arrive out of order and in pieces; the contiguous prefix grows
 * only when the part before it is whole */
GST_START_TEST (test_chunk_reassembly)
{
  MtcpHttpChunk *c = mtcp_http_chunk_new (1000, 1010, 3);
  guint8 *tail;
  gsize missing;
  guint i;

  fail_unless_equals_int (mtcp_http_chunk_n_parts (c), 3);
  fail_unless_equals_int (mtcp_http_chunk_contiguous (c), 0);
  /* part 2 (bytes 1007-1009) first */
  tail = mtcp_http_chunk_part_tail (c, 2, &missing);
  fail_unless_equals_int (missing, 3);
  memcpy (tail, "hij", 3);
  fail_unless (mtcp_http_chunk_part_advance (c, 2, 3));
  fail_unless_equals_int (mtcp_http_chunk_contiguous (c), 0);
  /* part 0 (1000-1003) in two pieces */
  tail = mtcp_http_chunk_part_tail (c, 0, &missing);
  memcpy (tail, "ab", 2);
  fail_unless (mtcp_http_chunk_part_advance (c, 0, 2));
  fail_unless_equals_int (mtcp_http_chunk_contiguous (c), 2);
  tail = mtcp_http_chunk_part_tail (c, 0, &missing);
  fail_unless_equals_int (missing, 2);
  memcpy (tail, "cd", 2);
  fail_unless (mtcp_http_chunk_part_advance (c, 0, 2));
  fail_unless_equals_int (mtcp_http_chunk_contiguous (c), 4);
  fail_if (mtcp_http_chunk_complete (c));
  /* more than a part misses is refused */
  fail_if (mtcp_http_chunk_part_advance (c, 1, 4));
  tail = mtcp_http_chunk_part_tail (c, 1, &missing);
  memcpy (tail, "efg", 3);
  fail_unless (mtcp_http_chunk_part_advance (c, 1, 3));
  fail_unless (mtcp_http_chunk_complete (c));
  fail_unless_equals_int (mtcp_http_chunk_contiguous (c), 10);
  fail_unless (memcmp (mtcp_http_chunk_data (c), "abcdefghij", 10) == 0);
  for (i = 0; i < 3; i++) {
    tail = mtcp_http_chunk_part_tail (c, i, &missing);
    fail_unless_equals_int (missing, 0);
  }
  mtcp_http_chunk_free (c);

  /* an empty chunk is complete */
  c = mtcp_http_chunk_new (5, 5, 4);
  fail_unless_equals_int (mtcp_http_chunk_n_parts (c), 0);
  fail_unless (mtcp_http_chunk_complete (c));
  mtcp_http_chunk_free (c);
}

GST_END_TEST;

static Suite *
httpchunk_suite (void)
{
  Suite *s = suite_create ("httpchunk");
  TCase *tc = tcase_create ("general");

  suite_add_tcase (s, tc);
  tcase_add_test (tc, test_split_covers_every_byte);
  tcase_add_test (tc, test_content_range);
  tcase_add_test (tc, test_chunk_reassembly);
  return s;
}

GST_CHECK_MAIN (httpchunk);
