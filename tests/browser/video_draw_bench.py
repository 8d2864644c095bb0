#!/usr/bin/env python3
"""What a frame costs the live page in headless Chromium: stereo 2x1024x1024 frames of the Cornell box
(a render panned 4 px a frame, the right eye 8 px off the left) handed to the page one at a time, as
the live session's 8 JPEG bands and as each video codec at the stream's rate, while the cluster idles.
Prints, per format, the medians of the page's decode (message received -> picture decoded), its draw
(to the frame canvas and the flat view's textures, as the page times it) and their sum; "GL finish":
a 1-pixel readback of the flat view's WebGL canvas right after that report, which waits for
the GL work still queued (a software GL does uploads and draws there). A measurement, not a test:
software decoders and SwiftShader GL here.

    video_draw_bench.py --build B --source S --shared D [--frames N] [--codecs jpeg,h264,vp9,av1]
                        [--bitrate MBIT] [--fps F] [--strips K]

--strips K: each video frame in K horizontal strips, each its own stream (the master's strip-parallel
video, PROTOCOL.md "Video streams"), the page decoding them with K decoders side by side.
"""
import argparse
import base64
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True
sys.path.insert(0, str(Path(__file__).parent))
from live_cluster import LiveCluster, Skip  # noqa: E402
from live_video_test import CODEC_STRINGS, annexb_access_units, ffmpeg, ivf_frames, quiet_page  # noqa: E402

# Hands the page one frame message and resolves, once the page reported it displayed, with [ms to the
# report (a display frame's wait included), the page's decode ms, its draw ms, ms for its flat view's GL
# to finish the work still queued].
MEASURE_JS = """
const [header, b64, done] = arguments;
const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
const json = new TextEncoder().encode(JSON.stringify(header));
const buffer = new ArrayBuffer(4 + json.length + bytes.length);
new DataView(buffer).setUint32(0, json.length, true);
new Uint8Array(buffer, 4).set(json);
new Uint8Array(buffer, 4 + json.length).set(bytes);
const log = window.__socketLog;
const start = performance.now();
log.sockets.at(-1).onmessage({ data: buffer });
const poll = () => {
  const report = log.sent.find((m) => m.type === 'displayed' && m.frame === header.frame);
  if (!report) {
    if (performance.now() - start > 20000) done(null);
    else setTimeout(poll, 1);
    return;
  }
  const shown = performance.now();
  const gl = window.tessera.flatReprojector.gl;  // waits for the GL work queued so far: uploads and the draw
  gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, new Uint8Array(4));
  const draws = window.tessera.streamStats.draws;
  done([shown - start, report.decoded - report.received, draws[draws.length - 1], performance.now() - shown]);
};
poll();"""

ENCODERS = {
    'h264': lambda rate, fps: ['-c:v', 'libx264', '-preset', 'superfast', '-tune', 'zerolatency', '-profile:v', 'high',
                               '-b:v', f'{rate}M', '-maxrate', f'{rate}M', '-bufsize', f'{rate / 10}M', '-bf', '0',
                               '-x264-params', 'aud=1', '-f', 'h264'],
    'vp9': lambda rate, fps: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-lag-in-frames', '0',
                              '-row-mt', '1', '-tile-columns', '3', '-b:v', f'{rate}M', '-f', 'ivf'],
    'av1': lambda rate, fps: ['-c:v', 'libsvtav1', '-preset', '10', '-svtav1-params', 'pred-struct=1:rc=2:tune=0',
                              '-b:v', f'{rate}M', '-f', 'ivf'],
}


def strip_layout(height, count):
    """[(y, rows)]: as common/video/video_strips.cpp cuts a picture (rows of 16, the last takes the rest)."""
    per = -(-(height // count) // 16) * 16
    return [(y, min(per, height - y)) for y in range(0, height, per)]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--build', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--shared', required=True)
    parser.add_argument('--frames', type=int, default=12)
    parser.add_argument('--codecs', default='jpeg,h264,vp9,av1')
    parser.add_argument('--bitrate', type=float, default=30, help='the video codecs\' Mbit/s (default 30)')
    parser.add_argument('--fps', type=float, default=72, help='frames a second the bitrate is spread over (default 72)')
    parser.add_argument('--strips', type=int, default=1, help='strips a video frame (default 1: the whole frame)')
    args = parser.parse_args()
    c = LiveCluster(args.build, args.source, os.environ.get('TESSERA_SHARED_DIR') or args.shared)
    try:
        bench(c, args)
    except Skip as skip:
        print(f'video_draw_bench: skipped: {skip}')
        return 77
    finally:
        c.stop()
    return 0


def bench(c, args):
    quiet_page(c)
    count, eyes, width, height = args.frames, 2, 1024, 1024
    render = c.dir / 'cornell.png'
    subprocess.run([str(c.build / 'worker/tessera-render'), str(c.pack_cornell()), '--device', 'host', '--size',
                    f'{width + 8 + 4 * count}x{height}', '-o', str(render)], check=True, stdout=subprocess.DEVNULL)
    stereo = ['-loop', '1', '-framerate', str(args.fps), '-i', str(render), '-frames:v', str(count), '-filter_complex',
              f'[0]split[a][b];[a]crop={width}:{height}:4*n:0[l];[b]crop={width}:{height}:4*n+8:0[r];[l][r]hstack']
    colour = ['-colorspace', 'bt709', '-color_primaries', 'bt709', '-color_trc', 'bt709', '-color_range', 'tv']
    streams = {}
    for codec in args.codecs.split(','):
        if codec == 'jpeg':
            bands, rows = 8, height // 8
            for b in range(bands):
                ffmpeg(*stereo[:-1], stereo[-1] + f',crop={eyes * width}:{rows}:0:{b * rows}', '-pix_fmt', 'yuvj420p', '-c:v', 'mjpeg',
                       '-q:v', '3', '-f', 'image2', str(c.dir / f'band{b}_%03d.jpg'))
            streams[codec] = [[(c.dir / f'band{b}_{i + 1:03d}.jpg').read_bytes() for b in range(bands)] for i in range(count)]
            continue
        if codec not in ENCODERS:
            raise SystemExit(f'video_draw_bench: error: unknown codec {codec!r}')
        layout = strip_layout(height, args.strips)
        per_strip = []
        for k, (y, rows) in enumerate(layout):
            out = c.dir / f'bench{k}.{codec}'
            ffmpeg(*stereo[:-1], stereo[-1] + f',crop={eyes * width}:{rows}:0:{y},scale=out_color_matrix=bt709:out_range=tv',
                   '-pix_fmt', 'yuv420p', *colour, '-g', '1000', *ENCODERS[codec](args.bitrate * rows / height, args.fps), str(out))
            data = out.read_bytes()
            per_strip.append(annexb_access_units(data) if codec == 'h264' else ivf_frames(data))
        streams[codec] = [[(y, rows, strip[i]) for (y, rows), strip in zip(layout, per_strip)] for i in range(count)]
    print(f'video_draw_bench: {eyes}x{width}x{height}, {count} frames, the first of each not counted (a cold decoder); '
          f'video at {args.bitrate:g} Mbit/s over {args.fps:g} frames/s, {args.strips} strip(s) a frame')
    print(f'{"format":<6} {"kB/frame":>9} {"decode":>8} {"draw":>8} {"sum":>8} {"GL finish":>10}   (medians, ms)')
    frame_id, pose = 2_000_000, 0
    for codec, frames in streams.items():
        rows = []
        for i, data in enumerate(frames):
            frame_id += 1
            header = {'type': 'frame', 'format': 2, 'frame': frame_id, 'pose_id': pose, 'samples': 1, 'eyes': eyes, 'width': width,
                      'height': height, 'tile': 40, 'owners': [], 'stages': {'encode': 1.0}}
            if codec == 'jpeg':
                header['bands'] = [{'y': b * (height // 8), 'height': height // 8, 'bytes': len(band)} for b, band in enumerate(data)]
                payload = b''.join(data)
            else:
                header['bands'] = []
                payload = b''.join(strip for _, _, strip in data)
                offsets = [sum(len(strip) for _, _, strip in data[:k]) for k in range(len(data))]
                header['video'] = {'codec': codec, 'codec_string': CODEC_STRINGS[codec], 'key': i == 0, 'seq': i, 'bytes': len(payload),
                                   'coded_width': eyes * width, 'coded_height': height, 'bitrate_mbit': args.bitrate,
                                   'encode_ms': 1.0,
                                   'strips': [{'y': y, 'height': rows, 'offset': offsets[k], 'bytes': len(strip), 'key': i == 0}
                                              for k, (y, rows, strip) in enumerate(data)]}
            result = c.driver.execute_async_script(MEASURE_JS, header, base64.b64encode(payload).decode())
            if result is None:
                raise AssertionError(f'{codec}: frame {i} was not displayed within 20 s')
            if i:
                rows.append((len(payload), *result))
            time.sleep(0.05)
        size = statistics.median(r[0] for r in rows) / 1000
        decode, draw, finish = (statistics.median(r[k] for r in rows) for k in (2, 3, 4))
        total = statistics.median(r[2] + r[3] for r in rows)
        in_memory = c.js('return window.tessera.videoStream.counts.planes') if codec != 'jpeg' else None
        note = '' if codec == 'jpeg' else ('  (planes to textures)' if in_memory else '  (VideoFrame to texture)')
        print(f'{codec:<6} {size:>9.1f} {decode:>8.1f} {draw:>8.1f} {total:>8.1f} {finish:>10.1f}{note}', flush=True)


if __name__ == '__main__':
    sys.exit(main())
