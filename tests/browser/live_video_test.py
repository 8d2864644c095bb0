#!/usr/bin/env python3
"""The live page's video streams (PROTOCOL.md "Video streams") in headless Chromium, whose WebCodecs
decodes H.264, VP9 and AV1 in software.

    live_video_test.py --build B --source S --shared D [--artifacts A] CASE

`fixture_*` cases hand the page frame messages of their own, encoded here with the ffmpeg command line
(a test clip, so the page's decoding is tested whatever codec the master sends); the other cases run
tessera-master --codec against the page. Exit status 0 passed, 1 failed, 77 skipped (no browser or
no ffmpeg here)."""
import base64
import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).parent))
from live_cluster import Skip, run_case  # noqa: E402

CODEC_STRINGS = {'h264': 'avc1.640033', 'vp9': 'vp09.00.51.08', 'av1': 'av01.0.13M.08'}

# Run before the page's scripts: VideoDecoder.decode() fails (as a decoder's error would: the decoder
# closes and calls its error callback) while window.__decodeErrors > 0, counting it down.
FAILING_DECODER_JS = """
(() => {
  const Native = window.VideoDecoder;
  if (!Native) return;
  window.__decodeErrors = 0;
  window.VideoDecoder = class extends Native {
    constructor(init) {
      super(init);
      this.reportError = init.error;
    }
    decode(chunk) {
      if (window.__decodeErrors > 0) {
        window.__decodeErrors -= 1;
        this.close();
        queueMicrotask(() => this.reportError(new DOMException('scripted decoder failure', 'EncodingError')));
        return;
      }
      return super.decode(chunk);
    }
  };
})();"""

NO_WEBCODECS_JS = 'delete window.VideoDecoder; delete window.VideoFrame; delete window.EncodedVideoChunk;'


# ---- test clips (ffmpeg) ----

def ffmpeg(*args):
    if not shutil.which('ffmpeg'):
        raise Skip('no ffmpeg here to encode the test clips')
    subprocess.run(['ffmpeg', '-v', 'error', '-y', *args], check=True)


ENCODERS = {
    'h264': ['-c:v', 'libx264', '-preset', 'ultrafast', '-tune', 'zerolatency', '-profile:v', 'high', '-crf', '12',
             '-bf', '0', '-x264-params', 'aud=1', '-f', 'h264'],
    'vp9': ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-lag-in-frames', '0', '-crf', '8', '-b:v', '0',
            '-f', 'ivf'],
    'av1': ['-c:v', 'libaom-av1', '-usage', 'realtime', '-cpu-used', '8', '-lag-in-frames', '0', '-crf', '8', '-f', 'ivf'],
}


def annexb_access_units(data):
    """An H.264 Annex B stream cut at its access unit delimiters (x264's aud=1), one frame each."""
    starts = [m.start() - (1 if m.start() > 0 and data[m.start() - 1] == 0 else 0)
              for m in re.finditer(b'\x00\x00\x01\x09', data)]
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def ivf_frames(data):
    at = int.from_bytes(data[6:8], 'little')
    frames = []
    while at + 12 <= len(data):
        size = int.from_bytes(data[at:at + 4], 'little')
        frames.append(data[at + 12:at + 12 + size])
        at += 12 + size
    return frames


def encode_clip(directory, codec, size, count, keys, coded=None):
    """A moving test pattern of `count` frames of `size` (w, h): returns its encoded frames
    [(key, bytes)] (key frames at the indices `keys`; coded at `coded` (w, h) when given) and the source
    frames as RGB bytes at `size`."""
    w, h = size
    source = ['-f', 'lavfi', '-i', f'testsrc2=size={w}x{h}:rate=30', '-frames:v', str(count)]
    raw = directory / f'{codec}.rgb'
    ffmpeg(*source, '-f', 'rawvideo', '-pix_fmt', 'rgb24', str(raw))
    encoded = directory / f'{codec}.bin'
    # BT.709, limited range, said in the stream: what the browser converts back with.
    scale = ['-vf', (f'scale={coded[0]}:{coded[1]}:' if coded else 'scale=') + 'out_color_matrix=bt709:out_range=tv',
             '-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', '-color_range', 'tv']
    force = '+'.join(f'eq(n,{k})' for k in keys)
    ffmpeg(*source, *scale, '-pix_fmt', 'yuv420p', '-g', '1000', '-force_key_frames', f'expr:{force}', *ENCODERS[codec], str(encoded))
    data = encoded.read_bytes()
    chunks = annexb_access_units(data) if codec == 'h264' else ivf_frames(data)
    assert len(chunks) == count, f'{codec}: {len(chunks)} frames in the clip, expected {count}'
    pixels = raw.read_bytes()
    frame_bytes = w * h * 3
    return [(i in keys, chunk) for i, chunk in enumerate(chunks)], [pixels[i * frame_bytes:(i + 1) * frame_bytes] for i in range(count)]


# ---- the page ----

INJECT_JS = """
const [header, b64] = arguments;
const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
const json = new TextEncoder().encode(JSON.stringify(header));
const buffer = new ArrayBuffer(4 + json.length + bytes.length);
new DataView(buffer).setUint32(0, json.length, true);
new Uint8Array(buffer, 4).set(json);
new Uint8Array(buffer, 4 + json.length).set(bytes);
window.__socketLog.sockets.at(-1).onmessage({ data: buffer });"""

# The RGB of the frame canvas (what the page drew) and of the reprojected WebGL canvas over it, base64.
CANVASES_JS = """
const rgb = (canvas) => {
  const g = new OffscreenCanvas(canvas.width, canvas.height).getContext('2d');
  g.drawImage(canvas, 0, 0);
  const d = g.getImageData(0, 0, canvas.width, canvas.height).data;
  let s = '';
  for (let i = 0; i < d.length; i += 4) s += String.fromCharCode(d[i], d[i + 1], d[i + 2]);
  return [canvas.width, canvas.height, btoa(s)];
};
const flat = document.getElementById('reprojected-canvas');
return [rgb(document.getElementById('frame-canvas')), flat.hidden ? null : rgb(flat)];"""


def canvases(c):
    return [None if shot is None else [shot[0], shot[1], base64.b64decode(shot[2])] for shot in c.js(CANVASES_JS)]


def psnr(a, b):
    assert len(a) == len(b), f'{len(a)} bytes against {len(b)}'
    se = sum((x - y) * (x - y) for x, y in zip(a, b))
    return 99.0 if se == 0 else 10 * math.log10(255 * 255 * len(a) / se)


def sent(c, kind):
    return [m for m in c.socket_log('sent') if m.get('type') == kind]


def displayed_frames(c):
    return {m['frame'] for m in sent(c, 'displayed')}


class Injector:
    """Hands the page video frame messages of one clip, numbered far after any frame the master sent."""
    next_frame = 1_000_000

    def __init__(self, c, codec, eyes, width, height):
        self.c, self.codec, self.eyes, self.width, self.height = c, codec, eyes, width, height

    def push(self, key, data, seq, coded, **fields):
        """`fields`: more header fields (the eyes' `views`, ...)."""
        frame = Injector.next_frame
        Injector.next_frame += 1
        pose = sent(self.c, 'pose')[-1]['id'] if sent(self.c, 'pose') else 0
        header = {**fields,'type': 'frame', 'format': 2, 'frame': frame, 'pose_id': pose, 'samples': 1, 'eyes': self.eyes,
                  'width': self.width, 'height': self.height, 'bands': [], 'tile': 40, 'owners': [],
                  'stages': {'encode': 1.0},
                  'video': {'codec': self.codec, 'codec_string': CODEC_STRINGS[self.codec], 'key': key, 'seq': seq,
                            'bytes': len(data), 'coded_width': coded[0], 'coded_height': coded[1],
                            'bitrate_mbit': 30, 'encode_ms': 1.5}}
        self.c.js(INJECT_JS, header, base64.b64encode(data).decode())
        return frame

    def push_jpeg(self, bands):
        """A JPEG frame message of `bands` (JPEG bytes, equal heights, top to bottom)."""
        frame = Injector.next_frame
        Injector.next_frame += 1
        rows = self.height // len(bands)
        header = {'type': 'frame', 'format': 2, 'frame': frame, 'pose_id': 0, 'samples': 1, 'eyes': self.eyes,
                  'width': self.width, 'height': self.height, 'tile': 40, 'owners': [], 'stages': {'encode': 1.0},
                  'bands': [{'y': i * rows, 'height': rows, 'bytes': len(band)} for i, band in enumerate(bands)]}
        self.c.js(INJECT_JS, header, base64.b64encode(b''.join(bands)).decode())
        return frame

    def wait_drawn(self, frame, what):
        self.c.wait_for(f'{self.codec}: {what} (frame {frame}) drawn', lambda: frame in displayed_frames(self.c), timeout=20)


def quiet_page(c, *init_scripts, query='?codec=jpeg'):
    """The master's JPEG page, its camera still and its frames no longer coming, so that frames handed to
    it are the only ones it draws."""
    c.start_workers()
    c.start_master('--mode', 'raytrace')
    c.url += query.replace('?', '&')
    c.open_page(init_scripts)
    c.js("window.__socketLog.withheld.push('keyframe')")  # asked of no master: the test answers them
    deadline, count, since = time.time() + 60, -1, time.time()
    while time.time() < deadline and time.time() - since < 1.5:
        now = len(c.socket_log('frames'))
        if now != count:
            count, since = now, time.time()
        time.sleep(0.2)


# ---- cases: the page's decoding, on clips made here ----

def fixture_codec(c, codec, coded=None, floor_db=30.0):
    """Each frame of a stereo clip decodes and draws over the whole image within `floor_db` PSNR of its
    source, on the frame canvas and the reprojected WebGL view; a gap in `seq` makes the page ask for a
    key frame and drop delta frames until one comes."""
    eyes, width, height = 2, 160, 128
    size = (eyes * width, height)
    clip, sources = encode_clip(c.dir, codec, size, 10, keys=(0, 7), coded=coded)
    coded = coded or size
    inject = Injector(c, codec, eyes, width, height)
    for i in range(4):
        frame = inject.push(*clip[i], seq=i, coded=coded)
    inject.wait_drawn(frame, 'the fourth frame')
    check_canvases(c, codec, sources[3], size, floor_db)
    asked = len(sent(c, 'keyframe'))
    after_gap = inject.push(*clip[5], seq=5, coded=coded)  # frame 4 never came
    c.wait_for(f'{codec}: a key frame asked for after a gap', lambda: len(sent(c, 'keyframe')) > asked, timeout=10)
    reason = sent(c, 'keyframe')[-1]['reason']
    assert 'missing' in reason, reason
    dropped = inject.push(*clip[6], seq=6, coded=coded)  # a delta frame before the key frame: dropped
    for i in (7, 8, 9):
        frame = inject.push(*clip[i], seq=i, coded=coded)
    inject.wait_drawn(frame, 'the last frame after the key frame')
    assert after_gap not in displayed_frames(c) and dropped not in displayed_frames(c), 'frames after a gap were drawn'
    check_canvases(c, codec, sources[9], size, floor_db)
    for report in sent(c, 'displayed'):
        if report['frame'] >= 1_000_000:
            assert report['received'] <= report['decoded'] <= report['t'], report


def check_canvases(c, codec, source, size, floor_db=30.0):
    """What the page shows of the last frame against its source: the flat view's WebGL canvas where the
    page has one (a picture decoded into memory goes only there, to its textures: the frame canvas under
    it is not drawn as well), and the frame canvas where not."""
    shown, flat = canvases(c)
    assert shown[:2] == list(size), f'{codec}: the frame canvas is {shown[:2]}, the image {size}'
    planes = c.js('return window.tessera.videoStream.counts.planes')
    checked = [('reprojected view', flat)] if flat is not None and flat[:2] == list(size) else []
    if not checked or not planes:
        checked.append(('frame canvas', shown))
    for what, shot in checked:
        db = psnr(shot[2], source)
        print(f'{codec}: {what} {db:.1f} dB PSNR against the source')
        assert db >= floor_db, f'{codec}: the {what} is {db:.1f} dB from the source (< {floor_db})'


def case_fixture_decode(c, args):
    """H.264, VP9 and AV1 clips through the page's decoder and draw (fixture_codec), and an H.264 clip
    coded at a smaller size stretched over the whole image."""
    quiet_page(c)
    offered = c.socket_log('sent')[0].get('decoders')
    assert offered == [], f'?codec=jpeg offered {offered}'
    for codec in CODEC_STRINGS:
        fixture_codec(c, codec)
    # Coded at 3/4 of the image's size (the rate controller's first step down): the lost detail of the
    # test pattern costs about 11 dB.
    fixture_codec(c, 'h264', coded=(240, 96), floor_db=20.0)
    summary = c.js('return window.tessera.streamStats.summary(performance.now())')
    assert summary['codec'] == 'h264' and summary['decodeMs'] >= 0, summary
    # Software decoders' pictures (I420 in memory): drawn from their planes, as three textures.
    counts = c.js('return window.tessera.videoStream.counts')
    assert counts['planes'] == counts['decoded'] > 0, counts


def case_fixture_xr(c, args):
    """In a scripted headset: a stereo H.264 clip given the eyes of the master's last frame draws into
    the XR layer (reprojected to the same eyes) within 30 dB PSNR of its source, and the page's frame
    canvas mirrors it."""
    from live_page_test import enter_xr, xr_config
    from live_cluster import fake_xr_script
    quiet_page(c, fake_xr_script(xr_config()))
    enter_xr(c)
    c.wait_for('a stereo frame', lambda: c.socket_log('frames')[-1]['eyes'] == 2, timeout=30)
    wait_until_quiet(c)
    last = c.socket_log('frames')[-1]
    eyes, width, height = 2, last['width'], last['height']
    clip, sources = encode_clip(c.dir, 'h264', (eyes * width, height), 4, keys=(0,))
    inject = Injector(c, 'h264', eyes, width, height)
    for i, (key, data) in enumerate(clip):
        frame = inject.push(key, data, seq=i, coded=(eyes * width, height), views=last['views'],
                            position=last['position'], orientation=last['orientation'], pose_id=last['pose_id'])
    inject.wait_drawn(frame, 'the last frame in the headset')
    layer = c.js("""
        const gl = window.__fakeXr.gl;
        const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight, pixels = new Uint8Array(w * h * 4);
        gl.bindFramebuffer(gl.FRAMEBUFFER, null);
        gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
        let s = '';
        for (let y = h - 1; y >= 0; --y)
          for (let x = 0; x < w; ++x) s += String.fromCharCode(...pixels.subarray((y * w + x) * 4, (y * w + x) * 4 + 3));
        return [w, h, btoa(s)];""")
    assert layer[:2] == [eyes * width, height], f'the layer is {layer[:2]}, the frame {eyes * width}x{height}'
    db = psnr(base64.b64decode(layer[2]), sources[-1])
    print(f'h264 in the headset: XR layer {db:.1f} dB PSNR against the source')
    assert db >= 30, f'the XR layer is {db:.1f} dB from the source'
    c.wait_for('the frame canvas mirroring it', lambda: psnr(canvases(c)[0][2], sources[-1]) >= 30, timeout=10)


def case_fixture_decode_error(c, args):
    """A decoder error: the page asks for a key frame, drops delta frames, and draws again from the next
    key frame."""
    quiet_page(c, FAILING_DECODER_JS)
    eyes, width, height = 1, 160, 128
    clip, sources = encode_clip(c.dir, 'h264', (width, height), 8, keys=(0, 5))
    inject = Injector(c, 'h264', eyes, width, height)
    for i in range(3):
        frame = inject.push(*clip[i], seq=i, coded=(width, height))
    inject.wait_drawn(frame, 'the third frame')
    c.js('window.__decodeErrors = 1')
    failed = inject.push(*clip[3], seq=3, coded=(width, height))
    c.wait_for('a key frame asked for after the decoder failed', lambda: sent(c, 'keyframe'), timeout=10)
    assert 'decode error' in sent(c, 'keyframe')[-1]['reason'], sent(c, 'keyframe')
    dropped = inject.push(*clip[4], seq=4, coded=(width, height))
    for i in (5, 6, 7):
        frame = inject.push(*clip[i], seq=i, coded=(width, height))
    inject.wait_drawn(frame, 'the last frame after the key frame')
    assert failed not in displayed_frames(c) and dropped not in displayed_frames(c), 'frames of a failed decoder were drawn'
    check_canvases(c, 'h264', sources[7], (width, height))
    counts = c.js('return window.tessera.videoStream.counts')
    assert counts['resets'] == 1 and counts['dropped'] >= 1, counts


# ---- cases: tessera-master --codec against the page ----

def read_ppm(path):
    """(width, height, RGB bytes) of a binary PPM (P6, maxval 255)."""
    data = Path(path).read_bytes()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b'#':
            at = data.index(b'\n', at)
            continue
        end = at
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[at:end])
        at = end
    assert fields[0] == b'P6' and fields[3] == b'255', fields
    w, h = int(fields[1]), int(fields[2])
    return w, h, data[at + 1:at + 1 + w * h * 3]


def video_session(c, codec, *extra, query='', init_scripts=()):
    """Workers, tessera-master --codec CODEC writing every frame it encodes as a reference, and the
    page (with `query` added to its URL); returns the reference frames' folder."""
    c.start_workers()
    references = c.dir / 'references'
    references.mkdir(exist_ok=True)
    c.start_master('--mode', 'raytrace', '--reference-frames', f'{references}:1', *extra, codec=codec)
    if query:
        c.url += '&' + query
    c.open_page(init_scripts)
    return references


def wait_until_quiet(c, seconds=1.5, timeout=90):
    """Waits until no frame has come for `seconds` (a still camera's refinements are done)."""
    deadline = time.time() + timeout
    count, since = len(c.socket_log('frames')), time.time()
    while time.time() < deadline:
        time.sleep(0.2)
        now = len(c.socket_log('frames'))
        if now != count:
            count, since = now, time.time()
        elif time.time() - since >= seconds:
            return
    raise AssertionError(f'frames kept coming for {timeout} s with a still camera\n{c.diagnostics()}')


def last_session(c):
    return [m for m in c.socket_log('text') if m.get('type') == 'session'][-1]


def drawn_against_reference(c, references, what, floor_db):
    """The newest frame drawn against the master's raw frame of it, where the page shows it (the flat
    view's WebGL canvas; the frame canvas too where it draws video pictures there): the lowest PSNR (dB)."""
    wait_until_quiet(c)
    newest = c.socket_log('frames')[-1]
    c.wait_for(f'{what}: the newest frame drawn', lambda: newest['frame'] in displayed_frames(c), timeout=20)
    reference = references / f'frame-{newest["frame"]}.ppm'
    c.wait_for(f'{what}: {reference.name} written', reference.exists, timeout=10)
    w, h, pixels = read_ppm(reference)
    shown, flat = canvases(c)
    assert shown[:2] == [w, h], f'{what}: the frame canvas is {shown[:2]}, the frame {w}x{h}'
    checked = {'reprojected view': flat} if flat is not None and flat[:2] == [w, h] else {}
    if not checked or not c.js('return window.tessera.videoStream.counts.planes'):
        checked['frame canvas'] = shown
    results = {name: psnr(shot[2], pixels) for name, shot in checked.items()}
    print(f'{what}: frame {newest["frame"]} ({w}x{h}) drawn ' + ', '.join(f'{name} {db:.1f} dB' for name, db in results.items())
          + ' PSNR against the master\'s raw frame')
    for name, db in results.items():
        assert db >= floor_db, f'{what}: the {name} is {db:.1f} dB from the frame (< {floor_db})'
    return min(results.values())


def master_codec(c, codec, floor_db=32.0):
    """tessera-master --codec CODEC: the page offers the codec, gets its frames as video, draws them
    within `floor_db` PSNR of the master's raw frames and shows the stream on the HUD and dashboard."""
    references = video_session(c, codec)
    hello = c.socket_log('sent')[0]
    assert codec in hello.get('decoders', []), f'hello offered {hello.get("decoders")}, not {codec}'
    c.wait_for(f'{codec}: the session naming the codec', lambda: last_session(c).get('codec') == codec, timeout=10)
    video = [f['video'] for f in c.socket_log('frames') if 'video' in f]
    assert video and all(v['codec'] == codec and v['codec_string'] == CODEC_STRINGS[codec] for v in video), video[:3]
    assert video[0]['key'] and video[0]['seq'] == 0, video[0]
    drawn_against_reference(c, references, codec, floor_db)
    assert not sent(c, 'keyframe'), f'{codec}: the page asked for key frames: {sent(c, "keyframe")}'
    c.wait_for(f'{codec}: the stream on the HUD', lambda: c.js("return document.getElementById('hud-stream').textContent").startswith(codec))
    c.wait_for(f'{codec}: the stream on the dashboard', lambda: all(
        word in c.js("return document.getElementById('stream-status').textContent")
        for word in (f"this page's stream: {codec}", 'target', 'decode', "driving page's stream (master)")), timeout=10)


def case_codec_h264(c, args):
    """master_codec for H.264; and a watching page acknowledges each video frame it draws too (its
    own stream's rate control)."""
    master_codec(c, 'h264')
    c.driver.get(c.url + '&watch')  # the same tab (it holds the socket recorder), the driver gone
    c.wait_for('the watcher drawing a video frame', lambda: c.socket_log('frames') and 'video' in c.socket_log('frames')[0]
               and sent(c, 'displayed'), timeout=20)
    assert last_session(c)['role'] == 'watch', last_session(c)


def case_codec_vp9(c, args):
    master_codec(c, 'vp9')


def case_codec_av1(c, args):
    master_codec(c, 'av1')


def case_codec_auto(c, args):
    """--codec auto: a page that decodes video gets video; one asking ?codec=jpeg, and one without
    WebCodecs (VideoDecoder scripted away before the page's scripts), offer no decoder and get JPEG."""
    video_session(c, 'auto')
    offered = c.socket_log('sent')[0].get('decoders')
    assert offered and set(offered) <= set(CODEC_STRINGS), offered
    c.wait_for('a video stream', lambda: last_session(c).get('codec') in offered, timeout=10)
    assert 'video' in c.socket_log('frames')[-1], c.socket_log('frames')[-1]
    for what, query, scripts in (('?codec=jpeg', '&codec=jpeg', ()), ('no WebCodecs', '', (NO_WEBCODECS_JS,))):
        for script in scripts:
            c.driver.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': script})
        c.driver.get(c.url + query)
        c.wait_for(f'{what}: a frame drawn', lambda: c.js("return document.getElementById('hud-frame').textContent") != '-')
        assert c.socket_log('sent')[0].get('decoders') == [], f'{what}: hello offered {c.socket_log("sent")[0]}'
        assert last_session(c).get('codec') == 'jpeg', f'{what}: session {last_session(c)}'
        frame = c.socket_log('frames')[-1]
        assert 'video' not in frame and frame['bands'], f'{what}: frame {frame}'
        c.wait_for(f'{what}: jpeg on the HUD', lambda: c.js("return document.getElementById('hud-stream').textContent").startswith('jpeg'))


def case_codec_strips(c, args):
    """tessera-master --video-strips 4: every video frame carries its strip table, the page decodes the
    strips (one decoder each) and draws the frame within 32 dB of the master's raw frame; a frame whose
    strip table is malformed is refused: one key frame request, one event, and the page draws again."""
    references = video_session(c, 'h264', '--video-strips', '4')
    c.wait_for('h264: the session', lambda: last_session(c).get('codec') == 'h264', timeout=10)
    drawn_against_reference(c, references, 'h264 in strips', 32.0)
    video = [f['video'] for f in c.socket_log('frames') if 'video' in f]
    assert all(len(v['strips']) > 1 for v in video), [v.get('strips') for v in video[:3]]
    assert c.js('return window.tessera.videoStream.counts.strips') == len(video[-1]['strips'])
    assert not sent(c, 'keyframe'), sent(c, 'keyframe')
    last = c.socket_log('frames')[-1]
    bad = {**last, 'frame': 2_000_000, 'video': {**last['video'], 'key': False, 'seq': last['video']['seq'] + 1,
                                                 'bytes': 64, 'strips': [{'y': 0, 'height': 16, 'offset': 8, 'bytes': 56, 'key': False}]}}
    for section in ('depth', 'alpha'):
        bad.pop(section, None)
    c.js(INJECT_JS, bad, base64.b64encode(bytes(64)).decode())
    c.wait_for('a key frame asked for after the malformed table', lambda: sent(c, 'keyframe'), timeout=10)
    requests = sent(c, 'keyframe')
    assert len(requests) == 1 and 'strip table refused' in requests[0]['reason'], requests
    assert c.js('return window.tessera.videoStream.counts.refused') == 1
    events = c.js("return [...document.querySelectorAll('#events li')].map((e) => e.textContent)")
    assert sum('strip table refused' in e for e in events) == 1, events
    from selenium.webdriver.common.action_chains import ActionChains
    c.driver.find_element('id', 'view').click()
    since = len(c.socket_log('frames'))

    def drawn_again():
        ActionChains(c.driver).key_down('d').pause(0.1).key_up('d').perform()
        return any(f['frame'] in displayed_frames(c) for f in c.socket_log('frames')[since:])
    c.wait_for('a frame drawn after the key frame', drawn_again, timeout=30)


def case_codec_decode_error(c, args):
    """A decoder error mid-stream: the page asks the master for a key frame (once) and draws again within
    a few frames."""
    video_session(c, 'h264', init_scripts=(FAILING_DECODER_JS,))
    from selenium.webdriver.common.action_chains import ActionChains
    c.driver.find_element('id', 'view').click()
    since = len(c.socket_log('frames'))
    c.js('window.__decodeErrors = 1')  # the next frame's decode fails

    def recovered():
        ActionChains(c.driver).key_down('d').pause(0.1).key_up('d').perform()  # new poses: new frames
        later = c.socket_log('frames')[since + 1:]
        key = next((i for i, f in enumerate(later) if f['video']['key']), None)
        return key is not None and any(f['frame'] in displayed_frames(c) for f in later[key:]) and (key, later[key])
    key, frame = c.wait_for('a key frame drawn after the failure', recovered, timeout=30)
    requests = sent(c, 'keyframe')
    assert len(requests) == 1 and 'decode error' in requests[0]['reason'], requests
    print(f'key frame {frame["frame"]} came {key + 1} frames after the first one that could have failed')
    assert key < 10, f'the key frame came {key + 1} frames after the failure'
    assert c.js('return window.tessera.videoStream.counts.resets') == 1


def case_codec_resize(c, args):
    """A size change from the page: the master's next stream starts with a key frame (seq 0) at the new
    size, and the page draws it without asking for one."""
    video_session(c, 'vp9')
    wait_until_quiet(c)
    c.js("""const f = document.querySelector('#settings [name=size]');
            f.value = '128x96';
            f.dispatchEvent(new Event('change', { bubbles: true }));""")
    c.wait_for('the session at 128x96', lambda: last_session(c).get('size') == [128, 96], timeout=20)
    first = c.wait_for('a frame at 128x96', lambda: next((f for f in c.socket_log('frames') if f['width'] == 128), None), timeout=30)
    assert first['video']['key'] and first['video']['seq'] == 0, first['video']
    assert (first['video']['coded_width'], first['video']['coded_height']) == (128, 96), first['video']
    c.wait_for('a 128x96 frame drawn', lambda: any(f['width'] == 128 and f['frame'] in displayed_frames(c)
                                                   for f in c.socket_log('frames')), timeout=20)
    assert c.js("const c = document.getElementById('frame-canvas'); return [c.width, c.height]") == [128, 96]
    assert not sent(c, 'keyframe'), f'the page asked for key frames: {sent(c, "keyframe")}'


def main():
    return run_case(__doc__, {name[5:]: case for name, case in globals().items() if name.startswith('case_')})


if __name__ == '__main__':
    sys.exit(main())
