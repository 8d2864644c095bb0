// This page's video stream from the master (PROTOCOL.md, "Video streams"): a frame is cut into horizontal
// strips, each its own stream with its own WebCodecs VideoDecoder (so the strips decode side by side), fed
// every encoded frame in order, since each delta frame references the frames before it. A decode error, a
// gap in `seq` or a malformed strip table resets every decoder, asks the master for a key frame and drops
// delta frames until one comes. A frame's strips are joined into one picture: their planes copied into
// their rows of one I420 buffer. Decoded pictures (VideoFrames) go to `onPicture`, which owns them and
// must close them soon: they hold the decoder's memory, and a decoder that runs out of it stalls.

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
  if (picture.format !== 'I420' || width % 2 || height % 2) return null;
  const planes = allocatePlanes(width, height);
  return (await copyPlanesInto(picture, planes, 0)) ? planes : null;
}

// Tightly packed I420 planes of a picture `width` x `height`, in one buffer.
function allocatePlanes(width, height) {
  const lumaBytes = width * height, chromaBytes = lumaBytes / 4;
  const bytes = new Uint8Array(lumaBytes + 2 * chromaBytes);
  return { width, height, bytes, y: bytes.subarray(0, lumaBytes), u: bytes.subarray(lumaBytes, lumaBytes + chromaBytes),
    v: bytes.subarray(lumaBytes + chromaBytes) };
}

// Copies an I420 picture (a strip) into rows `top`.. of `planes`; false when it is not 8-bit I420 in memory
// of the planes' width.
async function copyPlanesInto(picture, planes, top) {
  const { width, height } = picture.visibleRect ?? { width: picture.displayWidth, height: picture.displayHeight };
  if (picture.format !== 'I420' || width % 2 || height % 2 || top % 2 || picture.displayWidth !== width ||
      picture.displayHeight !== height || width !== planes.width || top + height > planes.height) {
    return false;
  }
  const lumaBytes = planes.width * planes.height, chromaBytes = lumaBytes / 4, chromaTop = (top / 2) * (width / 2);
  try {
    await picture.copyTo(planes.bytes, { layout: [{ offset: top * width, stride: width },
      { offset: lumaBytes + chromaTop, stride: width / 2 }, { offset: lumaBytes + chromaBytes + chromaTop, stride: width / 2 }] });
  } catch {
    return false;  // closed meanwhile, or a layout this browser refuses
  }
  return true;
}


const MAX_STRIPS = 64;
const COLOUR_SPACE = { primaries: 'bt709', transfer: 'iec61966-2-1', matrix: 'bt709', fullRange: false };

// The header's strip table, checked against the frame (as the master writes it: strips in order from
// row 0 covering the coded height, each even, each but the last a multiple of 16 rows; their bytes in
// order from 0 covering the frame's bytes). A header without a table is one strip. Throws the reason.
export function stripTable(video, byteLength) {
  const height = video.coded_height;
  if (!Number.isInteger(video.coded_width) || video.coded_width <= 0 || video.coded_width % 2) {
    throw new Error(`coded_width ${video.coded_width} is not even and positive`);
  }
  if (video.strips === undefined) return [{ y: 0, height, offset: 0, bytes: byteLength, key: !!video.key }];
  if (!Array.isArray(video.strips) || video.strips.length < 1 || video.strips.length > MAX_STRIPS) {
    throw new Error(`strips: between 1 and ${MAX_STRIPS} strips`);
  }
  let row = 0, offset = 0;
  video.strips.forEach((s, i) => {
    const ok = s && typeof s === 'object' && [s.y, s.height, s.offset, s.bytes].every(Number.isInteger) &&
      typeof s.key === 'boolean' && s.y === row && s.height > 0 && s.height % 2 === 0 &&
      (i === video.strips.length - 1 || s.height % 16 === 0) && s.offset === offset && s.bytes > 0 && s.bytes <= byteLength - offset;
    if (!ok) throw new Error(`strip ${i} does not follow on (rows from ${row}, bytes from ${offset})`);
    row += s.height;
    offset += s.bytes;
  });
  if (row !== height || offset !== byteLength) throw new Error(`strips cover ${row} rows and ${offset} bytes, not ${height} and ${byteLength}`);
  return video.strips;
}

export class VideoStream {
  // onPicture(videoFrame, context, decodeMs, yuv): a decoded picture, the `context` its frame was pushed
  //   with, the ms from push to picture, and its planes in memory (picturePlanes; null: draw the VideoFrame);
  // onKeyframeNeeded(reason): the stream cannot go on until the master sends a key frame.
  constructor({ onPicture, onKeyframeNeeded }) {
    this.onPicture = onPicture;
    this.onKeyframeNeeded = onKeyframeNeeded;
    this.decoders = [];              // one a strip
    this.configured = '';            // the codec string, coded width and strip rows the decoders were configured for
    this.waitingForKey = true;       // a stream starts at a key frame
    this.lastSeq = -1;
    this.inFlight = new Map();       // chunk timestamp -> { context, pushed, strips, pictures, left }
    this.nextTimestamp = 0;          // chunk timestamps: a count, so each picture finds its frame's context
    this.keyRequestedAt = -Infinity;
    // planes: pictures the page drew from their planes in memory (picturePlanes); strips: of the last frame
    this.counts = { pushed: 0, decoded: 0, dropped: 0, resets: 0, keyRequests: 0, planes: 0, refused: 0, strips: 0 };
  }

  // One frame message's video: `video` the header's `video` object, `bytes` the encoded frame, `context`
  // handed back with its picture. Returns false when the frame is dropped (no key frame since a reset).
  push(video, bytes, context) {
    const now = performance.now();
    this.counts.pushed += 1;
    let strips;
    try {
      strips = stripTable(video, bytes.byteLength);
    } catch (error) {
      this.counts.refused += 1;
      this.counts.dropped += 1;
      this.reset(`strip table refused: ${error.message}`);
      return false;
    }
    if (video.key) {
      if (!this.configure(video, strips)) return false;
      this.waitingForKey = false;
    } else if (this.waitingForKey) {
      this.counts.dropped += 1;
      if (now - this.keyRequestedAt > KEYFRAME_RETRY_MS) this.requestKeyframe(`delta frame ${video.seq} without a key frame before it`);
      return false;
    } else if (video.seq !== this.lastSeq + 1 || !this.sameLayout(video, strips)) {
      this.counts.dropped += 1;
      this.reset(`frame seq ${video.seq} after ${this.lastSeq}: frames missing`);
      return false;
    }
    this.lastSeq = video.seq;
    const timestamp = this.nextTimestamp++;
    this.inFlight.set(timestamp, { context, pushed: now, strips, pictures: new Array(strips.length), left: strips.length,
      width: video.coded_width, height: video.coded_height });
    this.counts.strips = strips.length;
    try {
      strips.forEach((strip, i) => {
        this.decoders[i].decode(new EncodedVideoChunk({ type: video.key ? 'key' : 'delta', timestamp,
          data: bytes.subarray(strip.offset, strip.offset + strip.bytes) }));
      });
    } catch (error) {
      this.reset(`decode refused: ${error.message}`);
      return false;
    }
    return true;
  }

  layoutKey(video, strips) {
    return `${video.codec_string} ${video.coded_width} ${strips.map((s) => `${s.y}+${s.height}`).join(',')}`;
  }

  sameLayout(video, strips) {
    return this.configured === this.layoutKey(video, strips) && this.decoders.every((d) => d.state === 'configured');
  }

  // A key frame: (re)configures the decoders when the codec, coded size or strips changed, or after a reset.
  configure(video, strips) {
    if (this.sameLayout(video, strips)) return true;
    this.discard();
    try {
      this.decoders = strips.map((strip) => {
        const decoder = this.makeDecoder(strips.length > 1);
        decoder.configure({ codec: video.codec_string, codedWidth: video.coded_width, codedHeight: strip.height, ...DECODER_SETTINGS });
        return decoder;
      });
    } catch (error) {
      this.reset(`cannot decode ${video.codec_string}: ${error.message}`);
      return false;
    }
    this.configured = this.layoutKey(video, strips);
    return true;
  }

  makeDecoder(striped) {
    const decoder = new VideoDecoder({
      output: (picture) => this.output(decoder, picture, striped),
      error: (error) => {
        if (this.decoders.includes(decoder)) this.reset(`decode error: ${error.message}`);
      },
    });
    return decoder;
  }

  output(decoder, picture, striped) {
    const index = this.decoders.indexOf(decoder);
    const entry = this.inFlight.get(picture.timestamp);
    if (index < 0 || !entry || entry.pictures[index]) {
      picture.close();
      return;
    }
    entry.pictures[index] = picture;
    entry.left -= 1;
    if (entry.left > 0) return;
    // Every strip of this frame is in; strips decode in order, so anything older still listed never will be.
    for (const [timestamp, older] of this.inFlight) {
      if (timestamp > picture.timestamp) break;
      this.inFlight.delete(timestamp);
      if (older !== entry) older.pictures.forEach((p) => p?.close());
    }
    this.counts.decoded += 1;
    if (!striped) {
      picturePlanes(picture).then((yuv) => this.onPicture(picture, entry.context, performance.now() - entry.pushed, yuv));
      return;
    }
    this.join(entry).then(({ joined, yuv }) => this.onPicture(joined, entry.context, performance.now() - entry.pushed, yuv),
      () => entry.pictures.forEach((p) => p.close()));  // the stream was reset meanwhile: its pictures are gone
  }

  // A frame's strips as one picture: their planes copied into their rows of one I420 buffer (wrapped in a
  // VideoFrame for whatever draws the picture itself), or, for pictures not in memory (a hardware decoder's),
  // drawn at their rows on a canvas.
  async join(entry) {
    const planes = allocatePlanes(entry.width, entry.height);
    const copied = await Promise.all(entry.pictures.map((p, i) => copyPlanesInto(p, planes, entry.strips[i].y)));
    const timestamp = entry.pictures[0].timestamp;
    let joined;
    if (copied.every(Boolean)) {
      joined = new VideoFrame(planes.bytes, { format: 'I420', codedWidth: entry.width, codedHeight: entry.height, timestamp,
        colorSpace: COLOUR_SPACE });
    } else {
      const canvas = new OffscreenCanvas(entry.width, entry.height);
      const context = canvas.getContext('2d');
      entry.pictures.forEach((p, i) => context.drawImage(p, 0, entry.strips[i].y));
      joined = new VideoFrame(canvas, { timestamp });
    }
    entry.pictures.forEach((p) => p.close());
    return { joined, yuv: copied.every(Boolean) ? planes : null };
  }

  // Drops the decoders and what they hold, and asks for a key frame to start again from.
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
    const decoders = this.decoders;
    this.decoders = [];
    for (const decoder of decoders) if (decoder.state !== 'closed') decoder.close();
    this.configured = '';
    for (const entry of this.inFlight.values()) entry.pictures.forEach((p) => p?.close());
    this.inFlight.clear();
    this.waitingForKey = true;
    this.lastSeq = -1;
  }
}
