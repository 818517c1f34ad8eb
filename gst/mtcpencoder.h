/* multitcp
 * Copyright (C) 2026 the multitcp authors
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/* The video encoder upstream of the sink, for bitrate-control=encoder:
 * found by walking upstream from the sink's pad (through parsers, queues,
 * muxers) to the first element classed as a video encoder with a bitrate
 * property it knows the unit of; its bitrate read and set in bits/s; a
 * keyframe asked for with a force-key-unit event.
 *
 * Thread-safe as GObject properties and pad events are: called from the
 * sink's I/O thread with no lock of the sink held. */
#ifndef __MTCP_ENCODER_H__
#define __MTCP_ENCODER_H__

#include <gst/gst.h>

G_BEGIN_DECLS

typedef struct _MtcpEncoder MtcpEncoder;

/* NULL when there is none upstream of @sinkpad. */
MtcpEncoder *mtcp_encoder_find (GstPad * sinkpad);
void mtcp_encoder_free (MtcpEncoder * encoder);

/* "x264enc0 (bitrate, kbit/s)" */
const gchar *mtcp_encoder_describe (MtcpEncoder * encoder);
guint64 mtcp_encoder_get_bps (MtcpEncoder * encoder);
void mtcp_encoder_set_bps (MtcpEncoder * encoder, guint64 bps);

/* Asks upstream of @sinkpad for a keyframe with its headers. */
void mtcp_encoder_request_keyframe (GstPad * sinkpad);

G_END_DECLS

#endif
