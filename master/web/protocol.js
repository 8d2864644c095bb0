// The page's side of the live session protocol (master/web/PROTOCOL.md): one WebSocket to /ws with the
// page's access token, JSON text messages both ways, binary messages from the master holding one frame
// (4-byte little-endian header length, JSON header, then the frame's JPEG bands one after another, or
// one encoded video frame).

// Splits a binary frame message into its header object, its bands [{ y, height, jpeg: Blob }] top to
// bottom (none for a video frame), its encoded video frame (Uint8Array, or null for JPEG), and the
// compressed depth and alpha sections that follow them (Uint8Array, or null where the header names
// none); throws on a malformed one. A header without `bands` (format 1) carries one JPEG.
export function parseFrameMessage(buffer) {
  if (buffer.byteLength < 4) throw new Error(`frame message of ${buffer.byteLength} bytes`);
  const headerLength = new DataView(buffer).getUint32(0, true);
  if (4 + headerLength > buffer.byteLength) throw new Error(`frame header of ${headerLength} bytes overruns the message`);
  const header = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, 4, headerLength)));
  if (header.type !== 'frame') throw new Error(`binary message of type ${header.type}`);
  const sections = ['depth', 'alpha'].map((name) => header[name]?.bytes ?? 0);
  if (!sections.every((bytes) => Number.isInteger(bytes) && bytes >= 0)) throw new Error('bad depth or alpha section size');
  const auxBytes = sections[0] + sections[1];
  if (header.video) return parseVideoFrame(buffer, header, 4 + headerLength, sections);
  const table = header.bands ?? [{ y: 0, height: header.height, bytes: buffer.byteLength - 4 - headerLength - auxBytes }];
  if (!Array.isArray(table) || table.length === 0) throw new Error('frame without bands');
  let at = 4 + headerLength, row = 0;
  const bands = table.map(({ y, height, bytes }) => {
    if (y !== row || !(height > 0) || !(bytes >= 0) || at + bytes > buffer.byteLength) throw new Error(`bad frame band at row ${y}`);
    const jpeg = new Blob([new Uint8Array(buffer, at, bytes)], { type: 'image/jpeg' });
    at += bytes;
    row += height;
    return { y, height, jpeg };
  });
  if (at + auxBytes !== buffer.byteLength || row !== header.height) throw new Error('frame bands do not add up to the frame');
  const [depth, alpha] = sections.map((bytes) => {
    if (bytes === 0) return null;
    const section = new Uint8Array(buffer, at, bytes);
    at += bytes;
    return section;
  });
  return { header, bands, video: null, depth, alpha };
}

// A video frame message: the encoded frame's `video.bytes` bytes right after the header, then the depth
// and alpha sections as after JPEG bands.
function parseVideoFrame(buffer, header, at, sectionBytes) {
  const bytes = header.video.bytes;
  if (!Number.isInteger(bytes) || bytes <= 0) throw new Error('bad video frame size');
  if (at + bytes + sectionBytes[0] + sectionBytes[1] !== buffer.byteLength) throw new Error('video frame sections do not add up to the frame');
  const video = new Uint8Array(buffer, at, bytes);
  at += bytes;
  const [depth, alpha] = sectionBytes.map((n) => {
    if (n === 0) return null;
    const section = new Uint8Array(buffer, at, n);
    at += n;
    return section;
  });
  return { header, bands: [], video, depth, alpha };
}

// The bytes of a zlib stream (the frame's depth and alpha sections).
export async function inflate(bytes) {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('deflate'));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

// The socket URL for this page: same host, wss (the page is always served over HTTPS), same token.
export function socketUrl(location) {
  const token = new URLSearchParams(location.search).get('token') || '';
  const scheme = location.protocol === 'http:' ? 'ws:' : 'wss:';
  return `${scheme}//${location.host}/ws?token=${encodeURIComponent(token)}`;
}

// One live connection to the master. Reconnects after a drop (the master may restart); callbacks:
//   onOpen(), onClose(code, reason), onMessage(object) for text messages,
//   onFrame(header, bands, receivedAt, { video, depth, alpha, messageBytes }) (receivedAt: performance.now()
//   when the message came; video: the encoded video frame or null; depth and alpha: the compressed
//   sections or null; messageBytes: the whole message's size).
// `wantsDepth`: the page reprojects, so the master sends every frame's depth. `decoders`: the video
// codecs this page decodes (hello's `decoders`; set before open()).
export class LiveConnection {
  constructor(url, client, callbacks) {
    this.url = url;
    this.client = client;
    this.callbacks = callbacks;
    this.want = 'drive';
    this.wantsDepth = false;
    this.decoders = [];
    this.socket = null;
    this.nextPoseId = 1;
    this.retryMs = 1000;
    this.stopped = false;
  }

  open() {
    const socket = new WebSocket(this.url);
    socket.binaryType = 'arraybuffer';
    this.socket = socket;
    socket.onopen = () => {
      this.retryMs = 1000;
      this.send({ type: 'hello', want: this.want, client: this.client, decoders: this.decoders,
        ...(this.wantsDepth ? { depth: true } : {}) });
      this.callbacks.onOpen?.();
    };
    socket.onmessage = (event) => this.dispatch(event.data);
    socket.onclose = async (event) => {
      if (this.socket !== socket) return;
      this.socket = null;
      // 1006: no close frame. A browser does not say why a WebSocket was refused, so ask the page's own
      // URL: a master restarted with a new token answers 403, one that is gone does not answer at all.
      const reason = event.code === 1006 ? (await this.whyUnreachable()) ?? event.reason : event.reason;
      this.callbacks.onClose?.(event.code, reason);
      if (!this.stopped) {
        setTimeout(() => this.open(), this.retryMs);
        this.retryMs = Math.min(this.retryMs * 2, 10000);
      }
    };
  }

  async whyUnreachable() {
    const page = this.url.replace(/^ws/, 'http').replace('/ws?', '/?');
    try {
      const response = await fetch(page, { cache: 'no-store' });
      if (response.status === 403) return "the master no longer accepts this page's token (restarted without --token?): open the URL it printed";
      return null;
    } catch {
      return 'the master does not answer';
    }
  }

  dispatch(data) {
    const receivedAt = performance.now();
    try {
      if (typeof data === 'string') {
        this.callbacks.onMessage?.(JSON.parse(data));
      } else {
        const { header, bands, video, depth, alpha } = parseFrameMessage(data);
        this.callbacks.onFrame?.(header, bands, receivedAt, { video, depth, alpha, messageBytes: data.byteLength });
      }
    } catch (error) {
      this.callbacks.onError?.(error);
    }
  }

  get connected() {
    return this.socket !== null && this.socket.readyState === WebSocket.OPEN;
  }

  send(message) {
    if (!this.connected) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  // Sends a pose sampled at page time `t` (performance.now()); returns its id, or 0 when not connected.
  // `extra` may hold gaze ([x, y] in 0..1) and views (XR eyes).
  sendPose(t, position, orientation, extra = {}) {
    const id = this.nextPoseId;
    const message = { type: 'pose', id, t, position, orientation, ...extra };
    if (!this.send(message)) return 0;
    this.nextPoseId += 1;
    return id;
  }

  // Frame `frame` (of pose `poseId`) drawn at `t`; `received` and `decoded`: when its message came and
  // when its bands were decoded (all performance.now()).
  sendDisplayed(frame, poseId, t, received, decoded) {
    this.send({ type: 'displayed', frame, pose_id: poseId, received, decoded, t });
  }

  // The page cannot go on decoding its video stream: the master's next frame to it is a key frame.
  sendKeyframeRequest(reason) {
    return this.send({ type: 'keyframe', reason: reason.slice(0, 200) });
  }

  sendSettings(settings) {
    return this.send({ type: 'settings', ...settings });
  }

  sendPlace(floor) {
    return this.send({ type: 'place', floor });
  }

  // The real primary light in scene space; without arguments, the scene's own sun again.
  sendLight(direction, irradiance) {
    return this.send(direction ? { type: 'light', direction, irradiance } : { type: 'light' });
  }

  takeControl() {
    this.want = 'drive';
    this.send({ type: 'take_control' });
  }
}
