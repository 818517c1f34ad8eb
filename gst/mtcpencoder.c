/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "mtcpencoder.h"

#include <string.h>

GST_DEBUG_CATEGORY_STATIC (mtcp_encoder_debug);
#define GST_CAT_DEFAULT mtcp_encoder_debug

/* elements looked at upstream before giving up */
#define MAX_VISITS 64

struct _MtcpEncoder {
  GstElement *element;
  gchar *property;
  guint64 unit;                 /* bits/s per unit of the property */
  gchar *description;
};

/* Encoders whose bitrate property or unit its description does not tell. */
static const struct {
  const gchar *factory;
  const gchar *property;
  guint64 unit;
} known[] = {
  {"x264enc", "bitrate", 1000},
  {"x265enc", "bitrate", 1000},
  {"vp8enc", "target-bitrate", 1},
  {"vp9enc", "target-bitrate", 1},
  {"openh264enc", "bitrate", 1},
  {"svtav1enc", "target-bitrate", 1000},
};

static gboolean
is_video_encoder (GstElement * element)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  const gchar *klass = factory ? gst_element_factory_get_metadata (factory,
      GST_ELEMENT_METADATA_KLASS) : NULL;

  return klass && strstr (klass, "Encoder") && strstr (klass, "Video");
}

/* The unit of an encoder's bitrate property from the words of its
 * description; 0 when they say nothing. */
static guint64
unit_from_blurb (GParamSpec * pspec)
{
  const gchar *blurb = g_param_spec_get_blurb (pspec);
  gchar *lower;
  guint64 unit = 0;

  if (blurb == NULL)
    return 0;
  lower = g_ascii_strdown (blurb, -1);
  if (strstr (lower, "mbit") || strstr (lower, "mbps") ||
      strstr (lower, "mb/s"))
    unit = 1000000;
  else if (strstr (lower, "kbit") || strstr (lower, "kbps") ||
      strstr (lower, "kb/s"))
    unit = 1000;
  else if (strstr (lower, "bit/s") || strstr (lower, "bits/s") ||
      strstr (lower, "bits per second") || strstr (lower, "bps"))
    unit = 1;
  g_free (lower);
  return unit;
}

static gboolean
is_number (GParamSpec * pspec)
{
  GType t = G_PARAM_SPEC_VALUE_TYPE (pspec);
  return t == G_TYPE_UINT || t == G_TYPE_INT || t == G_TYPE_UINT64 ||
      t == G_TYPE_INT64;
}

static MtcpEncoder *
encoder_for (GstElement * element)
{
  GstElementFactory *factory = gst_element_get_factory (element);
  const gchar *name = factory ?
      gst_plugin_feature_get_name (GST_PLUGIN_FEATURE (factory)) : "";
  GObjectClass *klass = G_OBJECT_GET_CLASS (element);
  const gchar *property = NULL;
  GParamSpec *pspec;
  guint64 unit = 0;
  MtcpEncoder *enc;
  guint i;

  if (!is_video_encoder (element))
    return NULL;
  for (i = 0; i < G_N_ELEMENTS (known); i++)
    if (g_strcmp0 (name, known[i].factory) == 0) {
      property = known[i].property;
      unit = known[i].unit;
    }
  if (property == NULL) {
    property = g_object_class_find_property (klass, "bitrate") ? "bitrate" :
        "target-bitrate";
  }
  pspec = g_object_class_find_property (klass, property);
  if (pspec == NULL || !is_number (pspec) || !(pspec->flags &
          G_PARAM_WRITABLE))
    return NULL;
  if (unit == 0)
    unit = unit_from_blurb (pspec);
  if (unit == 0) {
    GST_INFO ("%s: a bitrate property of no unit we can tell (\"%s\")",
        GST_OBJECT_NAME (element), g_param_spec_get_blurb (pspec));
    return NULL;
  }
  enc = g_new0 (MtcpEncoder, 1);
  enc->element = gst_object_ref (element);
  enc->property = g_strdup (property);
  enc->unit = unit;
  enc->description = g_strdup_printf ("%s (%s, %s)", GST_OBJECT_NAME (element),
      property, unit == 1000000 ? "Mbit/s" : unit == 1000 ? "kbit/s" :
      "bit/s");
  return enc;
}

static void
init_debug (void)
{
  static gsize done = 0;

  if (g_once_init_enter (&done)) {
    GST_DEBUG_CATEGORY_INIT (mtcp_encoder_debug, "multitcpencoder", 0,
        "multitcp upstream encoder");
    g_once_init_leave (&done, 1);
  }
}

MtcpEncoder *
mtcp_encoder_find (GstPad * sinkpad)
{
  GQueue pads = G_QUEUE_INIT;
  GHashTable *seen = g_hash_table_new (NULL, NULL);
  MtcpEncoder *found = NULL;
  guint visits = 0;
  GstPad *pad;

  init_debug ();
  /* breadth first over sink pads: the nearest encoder wins */
  g_queue_push_tail (&pads, gst_object_ref (sinkpad));
  while (found == NULL && (pad = g_queue_pop_head (&pads)) != NULL) {
    GstPad *peer = gst_pad_get_peer (pad);
    GstElement *element;
    GstObject *parent;

    gst_object_unref (pad);
    /* into a bin upstream: its source ghost pad's target */
    while (peer && GST_IS_GHOST_PAD (peer)) {
      GstPad *target = gst_ghost_pad_get_target (GST_GHOST_PAD (peer));
      gst_object_unref (peer);
      peer = target;
    }
    if (peer == NULL)
      continue;
    /* out of the bin the sink is in: on from its sink ghost pad */
    parent = gst_object_get_parent (GST_OBJECT (peer));
    if (parent && GST_IS_GHOST_PAD (parent)) {
      g_queue_push_tail (&pads, parent);
      gst_object_unref (peer);
      continue;
    }
    gst_clear_object (&parent);
    element = gst_pad_get_parent_element (peer);
    gst_object_unref (peer);
    if (element == NULL)
      continue;
    if (!g_hash_table_contains (seen, element) && ++visits <= MAX_VISITS) {
      GstIterator *it;
      GValue v = G_VALUE_INIT;

      g_hash_table_add (seen, element);
      found = encoder_for (element);
      it = gst_element_iterate_sink_pads (element);
      while (found == NULL && gst_iterator_next (it, &v) == GST_ITERATOR_OK) {
        g_queue_push_tail (&pads, g_value_dup_object (&v));
        g_value_reset (&v);
      }
      g_value_unset (&v);
      gst_iterator_free (it);
    }
    gst_object_unref (element);
  }
  g_queue_clear_full (&pads, gst_object_unref);
  g_hash_table_unref (seen);
  if (found)
    GST_INFO ("the encoder upstream: %s, at %" G_GUINT64_FORMAT " bit/s",
        found->description, mtcp_encoder_get_bps (found));
  return found;
}

void
mtcp_encoder_free (MtcpEncoder * enc)
{
  if (enc == NULL)
    return;
  gst_object_unref (enc->element);
  g_free (enc->property);
  g_free (enc->description);
  g_free (enc);
}

const gchar *
mtcp_encoder_describe (MtcpEncoder * enc)
{
  return enc->description;
}

guint64
mtcp_encoder_get_bps (MtcpEncoder * enc)
{
  GValue v = G_VALUE_INIT, u = G_VALUE_INIT;
  guint64 units;

  g_value_init (&u, G_TYPE_UINT64);
  g_object_get_property (G_OBJECT (enc->element), enc->property, &v);
  units = g_value_transform (&v, &u) ? g_value_get_uint64 (&u) : 0;
  g_value_unset (&v);
  g_value_unset (&u);
  return units * enc->unit;
}

void
mtcp_encoder_set_bps (MtcpEncoder * enc, guint64 bps)
{
  GParamSpec *pspec = g_object_class_find_property (G_OBJECT_GET_CLASS
      (enc->element), enc->property);
  GValue u = G_VALUE_INIT, v = G_VALUE_INIT;

  g_value_init (&u, G_TYPE_UINT64);
  g_value_set_uint64 (&u, MAX (bps / enc->unit, 1));
  g_value_init (&v, G_PARAM_SPEC_VALUE_TYPE (pspec));
  /* within the property's own range: an encoder may refuse the rest */
  if (g_value_transform (&u, &v)) {
    g_param_value_validate (pspec, &v);
    GST_DEBUG ("%s -> %" G_GUINT64_FORMAT " bit/s", enc->description, bps);
    g_object_set_property (G_OBJECT (enc->element), enc->property, &v);
  }
  g_value_unset (&u);
  g_value_unset (&v);
}

void
mtcp_encoder_request_keyframe (GstPad * sinkpad)
{
  /* GstForceKeyUnit, as gst_video_event_new_upstream_force_key_unit ()
   * makes it, without a dependency on the video library */
  GstStructure *s = gst_structure_new ("GstForceKeyUnit",
      "running-time", GST_TYPE_CLOCK_TIME, GST_CLOCK_TIME_NONE,
      "all-headers", G_TYPE_BOOLEAN, TRUE,
      "count", G_TYPE_UINT, 0, NULL);

  init_debug ();
  GST_DEBUG ("asking upstream for a keyframe");
  gst_pad_push_event (sinkpad, gst_event_new_custom
      (GST_EVENT_CUSTOM_UPSTREAM, s));
}
