// This page's video stream from the master (PROTOCOL.md, "Video streams"): one WebCodecs VideoDecoder fed
// every encoded frame in order, since each delta frame references the frames before it. A decode error or
// a gap in `seq` resets the decoder, asks the master for a key frame and drops delta frames until one
// comes. Decoded pictures (VideoFrames) go to `onPicture`, which owns them and must close them soon:
// they hold the decoder's memory, and a decoder that runs out of it stalls.

// The exact codec strings of the master's streams; `hello` offers a codec only when WebCodecs accepts it.
export const CODEC_STRINGS = { h264: 'avc1.640033', vp9: 'vp09.00.51.08', av1: 'av01.0.13M.08' };

const DECODER_SETTINGS = { optimizeForLatency: true, hardwareAcceleration: 'no-preference' };
const KEYFRAME_RETRY_MS = 1000;   // still no key frame this long after asking: ask again
const REASON_CHARS = 200;

// The codecs this page offers in `hello`: those WebCodecs decodes. `choice` is the page's `?codec=`
// parameter: 'jpeg' offers none (the master then sends JPEG), a codec's name offers only that one (when
// this browser decodes it), anything else every codec this browser decodes. No WebCodecs: none.
export async function decodableCodecs(choice) {
  if (typeof VideoDecoder === 'undefined' || choice === 'jpeg') return [];
  const names = CODEC_STRINGS[choice] ? [choice] : Object.keys(CODEC_STRINGS);
  const supported = await Promise.all(names.map(async (name) => {
    try {
      return (await VideoDecoder.isConfigSupported({ codec: CODEC_STRINGS[name], ...DECODER_SETTINGS })).supported;
    } catch {
      return false;
    }
  }));
  return names.filter((_, i) => supported[i]);
}

// A decoded picture's 4:2:0 planes, copied into memory tightly packed: { width, height, y, u, v }, or
// null when the picture is not 8-bit I420 in memory (a hardware decoder's picture, which the GPU draws
// as it is). A software decoder's picture is in memory already: the copy is a fraction of a millisecond,
// and three LUMINANCE textures take a software GL far less time than one RGBA upload of the VideoFrame.
export async function picturePlanes(picture) {
  const { width, height } = picture.visibleRect ?? { width: picture.displayWidth, height: picture.displayHeight };
  if (picture.format !== 'I420' || width % 2 || height % 2 || picture.displayWidth !== width || picture.displayHeight !== height) {
    return null;
  }
  const lumaBytes = width * height, chromaBytes = lumaBytes / 4;
  const bytes = new Uint8Array(lumaBytes + 2 * chromaBytes);
  try {
    await picture.copyTo(bytes, { layout: [{ offset: 0, stride: width }, { offset: lumaBytes, stride: width / 2 },
      { offset: lumaBytes + chromaBytes, stride: width / 2 }] });
  } catch {
    return null;  // closed meanwhile, or a layout this browser refuses: the VideoFrame is drawn instead
  }
  return { width, height, y: bytes.subarray(0, lumaBytes), u: bytes.subarray(lumaBytes, lumaBytes + chromaBytes),
    v: bytes.subarray(lumaBytes + chromaBytes) };
}

export class VideoStream {
  // onPicture(videoFrame, context, decodeMs): a decoded picture, the `context` its frame was pushed with,
  //   and the ms from push to picture;
  // onKeyframeNeeded(reason): the stream cannot go on until the master sends a key frame.
  constructor({ onPicture, onKeyframeNeeded }) {
    this.onPicture = onPicture;
    this.onKeyframeNeeded = onKeyframeNeeded;
    this.decoder = null;
    this.configured = '';            // the codec string and coded size the decoder was configured for
    this.waitingForKey = true;       // a stream starts at a key frame
    this.lastSeq = -1;
    this.inFlight = new Map();       // chunk timestamp -> { context, pushed }
    this.nextTimestamp = 0;          // chunk timestamps: a count, so each picture finds its frame's context
    this.keyRequestedAt = -Infinity;
    // planes: pictures the page drew from their planes in memory (picturePlanes)
    this.counts = { pushed: 0, decoded: 0, dropped: 0, resets: 0, keyRequests: 0, planes: 0 };
  }

  // One frame message's video: `video` the header's `video` object, `bytes` the encoded frame, `context`
  // handed back with its picture. Returns false when the frame is dropped (no key frame since a reset).
  push(video, bytes, context) {
    const now = performance.now();
    this.counts.pushed += 1;
    if (video.key) {
      if (!this.configure(video)) return false;
      this.waitingForKey = false;
    } else if (this.waitingForKey) {
      this.counts.dropped += 1;
      if (now - this.keyRequestedAt > KEYFRAME_RETRY_MS) this.requestKeyframe(`delta frame ${video.seq} without a key frame before it`);
      return false;
    } else if (video.seq !== this.lastSeq + 1) {
      this.counts.dropped += 1;
      this.reset(`frame seq ${video.seq} after ${this.lastSeq}: frames missing`);
      return false;
    }
    this.lastSeq = video.seq;
    const timestamp = this.nextTimestamp++;
    this.inFlight.set(timestamp, { context, pushed: now });
    try {
      this.decoder.decode(new EncodedVideoChunk({ type: video.key ? 'key' : 'delta', timestamp, data: bytes }));
    } catch (error) {
      this.reset(`decode refused: ${error.message}`);
      return false;
    }
    return true;
  }

  // A key frame: (re)configures the decoder when its codec or coded size changed, or after a reset.
  configure(video) {
    const wanted = `${video.codec_string} ${video.coded_width}x${video.coded_height}`;
    if (this.decoder?.state === 'configured' && this.configured === wanted) return true;
    try {
      if (!this.decoder || this.decoder.state === 'closed') this.decoder = this.makeDecoder();
      this.decoder.configure({ codec: video.codec_string, codedWidth: video.coded_width, codedHeight: video.coded_height,
        ...DECODER_SETTINGS });
    } catch (error) {
      this.reset(`cannot decode ${video.codec_string}: ${error.message}`);
      return false;
    }
    this.configured = wanted;
    return true;
  }

  makeDecoder() {
    const decoder = new VideoDecoder({
      output: (picture) => this.output(decoder, picture),
      error: (error) => {
        if (decoder === this.decoder) this.reset(`decode error: ${error.message}`);
      },
    });
    return decoder;
  }

  output(decoder, picture) {
    const entry = this.inFlight.get(picture.timestamp);
    // Pictures come in decode order: anything older still listed never will.
    for (const timestamp of this.inFlight.keys()) {
      if (timestamp > picture.timestamp) break;
      this.inFlight.delete(timestamp);
    }
    if (decoder !== this.decoder || !entry) {
      picture.close();
      return;
    }
    this.counts.decoded += 1;
    this.onPicture(picture, entry.context, performance.now() - entry.pushed);
  }

  // Drops the decoder and what it holds, and asks for a key frame to start again from.
  reset(reason) {
    this.discard();
    this.counts.resets += 1;
    this.requestKeyframe(reason);
  }

  requestKeyframe(reason) {
    this.keyRequestedAt = performance.now();
    this.counts.keyRequests += 1;
    this.onKeyframeNeeded(reason.slice(0, REASON_CHARS));
  }

  // The connection dropped: the next stream starts with a key frame anyway, so nothing is asked for.
  discard() {
    if (this.decoder && this.decoder.state !== 'closed') this.decoder.close();
    this.decoder = null;
    this.configured = '';
    this.inFlight.clear();
    this.waitingForKey = true;
    this.lastSeq = -1;
  }
}
