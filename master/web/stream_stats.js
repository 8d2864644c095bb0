// This page's own stream of frames as it arrives, for the HUD and the dashboard: the codec, the Mbit/s
// received, the master's bitrate target and encode time (from the frame headers), the page's decode and
// draw times, and the scale of the coded resolution. Mbit/s covers the last two seconds, the times the
// last 32 frames (a slow stream has few frames in two seconds).

const WINDOW_MS = 2000;
const TIMES_KEPT = 32;

function median(values) {
  if (!values.length) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export class StreamStats {
  constructor() {
    this.arrivals = [];   // [t, message bytes]
    this.decodes = [];    // ms from a message's arrival to its picture decoded
    this.draws = [];      // ms drawing a decoded frame to the canvas and the textures
    this.header = null;   // the newest frame header
  }

  // A frame message of `bytes` bytes arrived at `t` (performance.now()).
  received(t, bytes, header) {
    this.arrivals.push([t, bytes]);
    this.header = header;
    this.trim(t);
  }

  decoded(ms) {
    this.decodes.push(ms);
    if (this.decodes.length > TIMES_KEPT) this.decodes.shift();
  }

  drawn(ms) {
    this.draws.push(ms);
    if (this.draws.length > TIMES_KEPT) this.draws.shift();
  }

  trim(now) {
    while (this.arrivals.length && this.arrivals[0][0] < now - WINDOW_MS) this.arrivals.shift();
  }

  // { codec, mbitPerS, targetMbit (NaN for JPEG), encodeMs, decodeMs, drawMs, scale } at `now`.
  summary(now) {
    this.trim(now);
    const header = this.header;
    const video = header?.video;
    const bytes = this.arrivals.reduce((sum, [, n]) => sum + n, 0);
    const imageWidth = (header?.eyes || 1) * (header?.width || 0);
    return {
      codec: header ? video?.codec ?? 'jpeg' : '-',
      mbitPerS: (bytes * 8) / (WINDOW_MS * 1000),
      targetMbit: video?.bitrate_mbit ?? NaN,
      encodeMs: video?.encode_ms ?? header?.stages?.encode ?? NaN,
      decodeMs: median(this.decodes),
      drawMs: median(this.draws),
      scale: video && imageWidth > 0 ? video.coded_width / imageWidth : 1,
    };
  }
}
