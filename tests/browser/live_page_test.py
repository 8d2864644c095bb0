#!/usr/bin/env python3
"""The live page in a real browser: headless Chromium on tessera-master --serve with two local workers.

    live_page_test.py --build B --source S --shared D [--artifacts A] CASE

D holds the shared scenes; $TESSERA_SHARED_DIR, when set at run time, takes its place (as for the
other tests). CASE is one of the functions named case_* below. Exit status 0 passed, 1 failed, 77 skipped (no
browser installed here)."""
import argparse
import json
import math
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).parent))
from live_cluster import SKIP, LiveCluster, Skip, fake_xr_script  # noqa: E402


def pose_messages(c):
    return [m for m in c.socket_log('sent') if m.get('type') == 'pose']


def frames(c):
    return c.socket_log('frames')


def last_session(c):
    return [m for m in c.socket_log('text') if m.get('type') == 'session'][-1]


def hud(c, name):
    return c.js(f"return document.getElementById('hud-{name}').textContent")


def hud_samples(c):
    text = hud(c, 'samples')
    return int(text.split('/')[0]) if text[:1].isdigit() else 0


def press(c, key, seconds):
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(c.driver).key_down(key).pause(seconds).key_up(key).perform()


def wait_for_frame_of_pose(c, pose_id, timeout=60):
    return c.wait_for(f'a frame rendered from pose {pose_id}',
                      lambda: next((f for f in frames(c) if f['pose_id'] >= pose_id), None), timeout)


def wait_until_quiet(c, seconds=1.5, timeout=90):
    """Waits until no frame has arrived for `seconds`; returns the frame count then."""
    deadline = time.time() + timeout
    count, since = len(frames(c)), time.time()
    while time.time() < deadline:
        time.sleep(0.2)
        now = len(frames(c))
        if now != count:
            count, since = now, time.time()
        elif time.time() - since >= seconds:
            return count
    raise AssertionError(f'frames kept coming for {timeout} s with a still camera\n{c.diagnostics()}')


def connection_closes(c, message_js):
    """Opens a second socket with the right token, says hello, sends what `message_js` evaluates to;
    returns {opened, code, reason} once the master closes it (code 0: still open after 10 s)."""
    return c.driver.execute_async_script(f"""
        const done = arguments[arguments.length - 1];
        const ws = new WebSocket(`wss://${{location.host}}/ws?token=${{new URLSearchParams(location.search).get('token')}}`);
        let opened = false;
        const timer = setTimeout(() => {{ done({{opened, code: 0, reason: 'still open'}}); ws.close(); }}, 10000);
        ws.onopen = () => {{
          opened = true;
          ws.send(JSON.stringify({{type: 'hello', want: 'watch', client: 'desktop'}}));
          ws.send({message_js});
        }};
        ws.onclose = (e) => {{ clearTimeout(timer); done({{opened, code: e.code, reason: e.reason}}); }};""")


def refused_socket(c, query):
    return c.driver.execute_async_script(f"""
        const done = arguments[arguments.length - 1];
        const ws = new WebSocket(`wss://${{location.host}}/ws{query}`);
        let opened = false;
        ws.onopen = () => {{ opened = true; }};
        ws.onclose = (e) => done({{opened, code: e.code}});""")


# Decodes the latest frame's recorded bands in the browser and draws each at its rows, as the page
# does; JavaScript that leaves {width, height, data} (RGBA rows, top first) in `frame` and goes on
# with `then`.
DECODE_LAST_FRAME_JS = """
    const bands = window.__socketLog.lastBands;
    Promise.all(bands.map((b) => createImageBitmap(new Blob([b.bytes], {type: 'image/jpeg'})))).then((bitmaps) => {
      const width = bitmaps[0].width, height = bands.reduce((rows, b) => rows + b.height, 0);
      const canvas = new OffscreenCanvas(width, height);
      const g = canvas.getContext('2d');
      bitmaps.forEach((bitmap, i) => g.drawImage(bitmap, 0, bands[i].y));
      const frame = {width, height, data: g.getImageData(0, 0, width, height).data, canvas};
      then(frame);
    });"""


def last_frame_png(c, path):
    """The latest frame as the browser decodes it, written losslessly to `path` (PNG)."""
    data = c.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const then = (frame) => frame.canvas.convertToBlob({type: 'image/png'})
          .then((blob) => blob.arrayBuffer()).then((buffer) => done(Array.from(new Uint8Array(buffer))));""" + DECODE_LAST_FRAME_JS)
    Path(path).write_bytes(bytes(data))
    return path


# ---- cases ----

def case_token(c, args):
    """The page loads over HTTPS with the token; a wrong or missing token is refused."""
    c.start_workers()
    c.start_master()
    token = c.token()
    status, body = c.http_get(f'/?token={token}')
    assert status == 200 and b'<title>Tessera live</title>' in body, (status, body[:200])
    wrong = ('0' if token[0] != '0' else '1') + token[1:]
    for path in ('/', f'/?token={wrong}', '/index.html', f'/index.html?token={wrong}', '/?token='):
        status, _ = c.http_get(path)
        assert status == 403, f'GET {path}: {status}, expected 403'
    status, body = c.http_get('/app.js')
    assert status == 200 and b'LiveConnection' in body, f'GET /app.js: {status}'

    c.open_page()
    assert c.js("return document.getElementById('connection').textContent") == 'connected'
    assert c.js("return document.getElementById('role').textContent") == 'driving'
    for query in ('', f'?token={wrong}'):
        result = refused_socket(c, query)
        assert not result['opened'], f'/ws{query} opened a WebSocket'
    names = lambda: c.js("return [...document.querySelectorAll('#workers tbody tr td:first-child')].map(td => td.textContent)")
    c.wait_for('the workers table listing w1 and w2 as ready',
               lambda: sorted(n[-4:] for n in names()) == ['(w1)', '(w2)'] and
               c.js("return document.querySelectorAll('#workers tbody tr.state-ready').length") == 2)

    # The screenshot for the README: move a little, tile owners shown, charts with a few seconds in them.
    c.driver.find_element('id', 'show-overlay').click()
    c.driver.find_element('id', 'view').click()
    for key in ('w', 'a', 'd'):
        press(c, key, 0.3)
        wait_for_frame_of_pose(c, pose_messages(c)[-1]['id'])
    c.wait_for('the tile-owner legend', lambda: c.js("return document.getElementById('legend').children.length") >= 1)
    c.driver.set_window_size(1100, 760)
    time.sleep(1)
    if args.artifacts:
        c.screenshot(Path(args.artifacts) / 'live_page.png')

    # A second page watches until it takes control; the first then watches.
    role = lambda: c.js("return document.getElementById('role').textContent")
    first = c.driver.current_window_handle
    c.driver.switch_to.new_window('tab')
    c.driver.get(c.url)
    c.wait_for('the second page watching', lambda: role() == 'watching')
    assert c.js("return !document.getElementById('take-control').hidden"), 'no Take control button on a watching page'
    assert c.js("return document.querySelector('#settings [name=mode]').disabled"), 'a watcher may change settings'
    c.driver.find_element('id', 'take-control').click()
    c.wait_for('the second page driving', lambda: role() == 'driving')
    c.driver.switch_to.window(first)
    c.wait_for('the first page watching', lambda: role() == 'watching')
    c.driver.get(c.origin() + f'/?token={wrong}')
    assert c.driver.title != 'Tessera live', 'the page loaded with a wrong token'


def case_keys(c, args):
    """Pressing keys moves the camera: new poses reach the master, new frames reach the page and differ;
    a still camera sends no pose."""
    c.start_workers()
    c.start_master()
    c.open_page()
    c.driver.find_element('id', 'view').click()
    wait_until_quiet(c)
    before = c.canvas_digest()
    sent_before = len(pose_messages(c))
    start = c.js('return window.__socketLog.sent.filter(m => m.type === "pose").at(-1)')
    press(c, 'w', 0.6)
    poses = pose_messages(c)[sent_before:]
    assert len(poses) >= 3, f'{len(poses)} poses sent while W was held 0.6 s (expected one per display frame)'
    assert [p['id'] for p in poses] == list(range(poses[0]['id'], poses[0]['id'] + len(poses))), 'pose ids not consecutive'
    forward = poses[-1]['position'][2] - start['position'][2]
    assert forward > 0, f'W moved the Cornell camera by {forward} along +z (it looks down +z)'
    assert all(p['orientation'] == start['orientation'] for p in poses), 'W turned the camera'
    frame = wait_for_frame_of_pose(c, poses[-1]['id'])
    assert frame['pose_id'] == poses[-1]['id'], f'frame of pose {frame["pose_id"]}, newest sent {poses[-1]["id"]}'
    c.wait_for('the canvas showing the moved view', lambda: c.canvas_digest() != before)

    # Holding still sends nothing new.
    sent = len(pose_messages(c))
    time.sleep(1.0)
    assert len(pose_messages(c)) == sent, 'poses sent while no key was held'

    # A mouse drag turns the view.
    from selenium.webdriver.common.action_chains import ActionChains
    moved = c.canvas_digest()
    view = c.driver.find_element('id', 'view')
    ActionChains(c.driver).move_to_element(view).click_and_hold().move_by_offset(40, 0).pause(0.2).release().perform()
    turned = pose_messages(c)[sent:]
    assert turned and turned[-1]['orientation'] != poses[-1]['orientation'], 'a drag did not turn the camera'
    wait_for_frame_of_pose(c, turned[-1]['id'])
    c.wait_for('the canvas showing the turned view', lambda: c.canvas_digest() != moved)
    c.wait_for('the page measuring pose -> photon latency', lambda: 'median' in hud(c, 'latency'))

    # Phones: one finger drags the view round, two fingers pushed up move forward.
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput
    rect = c.js("const r = document.getElementById('frame-canvas').getBoundingClientRect(); return [r.x, r.y, r.width, r.height]")
    cx, cy = int(rect[0] + rect[2] / 2), int(rect[1] + rect[3] / 2)
    sent = len(pose_messages(c))
    actions = ActionBuilder(c.driver, mouse=PointerInput(interaction.POINTER_TOUCH, 'finger'))
    actions.pointer_action.move_to_location(cx, cy).pointer_down().move_to_location(cx - 30, cy).move_to_location(cx - 60, cy).pointer_up()
    actions.perform()
    looked = pose_messages(c)[sent:]
    assert looked and looked[-1]['orientation'] != turned[-1]['orientation'], 'a one-finger drag did not turn the camera'
    assert looked[-1]['position'] == turned[-1]['position'], 'a one-finger drag moved the camera'
    sent = len(pose_messages(c))
    actions = ActionBuilder(c.driver)
    fingers = [actions.add_pointer_input(interaction.POINTER_TOUCH, f'finger{k}') for k in (1, 2)]
    for k, finger in enumerate(fingers):
        finger.create_pointer_move(x=cx - 20 + 40 * k, y=cy, origin='viewport')
        finger.create_pointer_down()
    for step in range(1, 6):
        for k, finger in enumerate(fingers):
            finger.create_pointer_move(duration=60, x=cx - 20 + 40 * k, y=cy - 12 * step, origin='viewport')
    for finger in fingers:
        finger.create_pause(0.3)
        finger.create_pointer_up(0)
    actions.perform()
    pushed = pose_messages(c)[sent:]
    assert pushed, 'a two-finger push sent no pose'
    forward = quat_rotate(looked[-1]['orientation'], [0, 0, -1])
    step = [b - a for a, b in zip(looked[-1]['position'], pushed[-1]['position'])]
    assert sum(f * d for f, d in zip(forward, step)) > 0, f'two fingers pushed up moved {step}, not forward {forward}'
    wait_for_frame_of_pose(c, pushed[-1]['id'])


def assert_refines_then_stops(c, first, mode):
    """From frame index `first` on, with a still camera: the frames of the pose come with rising sample
    counts up to the session's max_samples, and then none is re-sent."""
    count = wait_until_quiet(c)
    time.sleep(1.5)
    assert len(frames(c)) == count, f'{mode}: {len(frames(c)) - count} frames re-sent for a pose that held'
    held = frames(c)[first:]
    assert held and len({f['pose_id'] for f in held}) == 1, f'{mode}: the pose changed while holding still'
    samples = [f['samples'] for f in held]
    assert all(b > a for a, b in zip(samples, samples[1:])), f'{mode}: samples {samples} do not rise'
    assert samples[-1] == last_session(c)['max_samples'], f'{mode}: refinement stopped at {samples[-1]} samples'
    assert hud_samples(c) == samples[-1], f'{mode}: the page shows {hud(c, "samples")}, the last frame had {samples[-1]}'
    return samples


def case_still(c, args):
    """Holding still: the pathtrace sample count on the page rises; a raytrace frame is not re-sent for
    the same pose (only refinements with more jittered samples, up to the cap). The mode is switched
    live from the page's settings."""
    c.start_workers()
    c.start_master('--mode', 'pathtrace', '--spp', '4', '--max-path-samples', '32')
    c.open_page()
    seen = []
    c.wait_for('the pathtrace sample count on the page rising',
               lambda: seen.append(hud_samples(c)) or (len(set(seen)) >= 3 and seen == sorted(seen)), timeout=90)
    samples = assert_refines_then_stops(c, 0, 'pathtrace')
    assert samples[0] == 4 and samples[-1] == 32, samples

    from selenium.webdriver.support.ui import Select
    switched = len(frames(c))
    Select(c.driver.find_element('name', 'mode')).select_by_visible_text('raytrace')
    c.wait_for('the master switching to raytrace', lambda: last_session(c)['settings']['mode'] == 'raytrace')
    c.wait_for('a raytrace frame', lambda: len(frames(c)) > switched)
    samples = assert_refines_then_stops(c, switched, 'raytrace')
    assert samples[0] == 1, samples


def xr_config():
    """Known viewer and eye poses (XR space, metres) and off-axis projections for the scripted headset."""
    def projection(left, right, bottom, top, near=0.05, far=100.0):
        m = [0.0] * 16
        m[0] = 2 / (right - left)
        m[5] = 2 / (top - bottom)
        m[8] = (right + left) / (right - left)
        m[9] = (top + bottom) / (top - bottom)
        m[10] = -(far + near) / (far - near)
        m[11] = -1
        m[14] = -2 * far * near / (far - near)
        return m
    half = math.radians(5) / 2  # the head turned 5 degrees to the left
    head = {'x': 0.0, 'y': math.sin(half), 'z': 0.0, 'w': math.cos(half)}
    viewer = [0.01, 0.02, -0.03]
    def eye(offset):
        return [viewer[0] + offset * math.cos(2 * half), viewer[1], viewer[2] - offset * math.sin(2 * half)]
    gaze_half = math.radians(3) / 2  # eyes looking 3 degrees down from the head's direction
    w, x, y, z = quat_mul([head['w'], 0, head['y'], 0], [math.cos(gaze_half), -math.sin(gaze_half), 0, 0])
    gaze = {'x': x, 'y': y, 'z': z, 'w': w}  # head * rotation by -3 degrees about x
    return {
        'eyeWidth': 160, 'eyeHeight': 120,
        'viewer': {'position': viewer, 'orientation': head},
        'views': [
            {'eye': 'left', 'position': eye(-0.032), 'orientation': head, 'projection': projection(-0.58, 0.42, -0.38, 0.40)},
            {'eye': 'right', 'position': eye(0.032), 'orientation': head, 'projection': projection(-0.42, 0.58, -0.38, 0.40)},
        ],
        'gaze': {'orientation': gaze},
    }


def quat_mul(a, b):
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return [aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw]


def quat_rotate(q, v):
    p = quat_mul(quat_mul(q, [0, *v]), [q[0], -q[1], -q[2], -q[3]])
    return p[1:]


def same_rotation(a, b, tolerance=1e-6):
    return abs(abs(sum(x * y for x, y in zip(a, b))) - 1) < tolerance


def case_xr(c, args):
    """The XR path with a scripted navigator.xr: the page sends the viewer pose and both eyes (pose in
    scene space and the frustum from the projection matrix), the workers render exactly those eyes
    (equal to tessera-render of the same off-axis eyes, pixel for pixel), and the page draws the
    returned eye images into the XR layer's two viewports."""
    config = xr_config()
    c.start_workers()
    out = c.dir / 'frames'
    c.start_master('--mode', 'raytrace', '--out', str(out))
    c.open_page([fake_xr_script(config)])
    c.wait_for('the Enter VR button', lambda: c.js("return !document.getElementById('enter-vr').hidden"))
    c.driver.find_element('id', 'enter-vr').click()
    pose = c.wait_for('a pose with eye views', lambda: next((p for p in pose_messages(c) if 'views' in p), None))

    # The eyes sent, against the scripted headset placed at the scene camera (heading only).
    session = last_session(c)
    camera = session['scene']['camera']
    scale = session['scene'].get('units_per_meter') or 1
    forward = quat_rotate(camera['orientation'], [0, 0, -1])
    yaw = math.atan2(-forward[0], -forward[2])
    anchor = [math.cos(yaw / 2), 0, math.sin(yaw / 2), 0]
    assert len(pose['views']) == 2, pose
    for sent, expected in zip(pose['views'], config['views']):
        local = [x * scale for x in expected['position']]
        position = [a + b for a, b in zip(camera['position'], quat_rotate(anchor, local))]
        o = expected['orientation']
        orientation = quat_mul(anchor, [o['w'], o['x'], o['y'], o['z']])
        m = expected['projection']
        frustum = [(m[8] - 1) / m[0], (m[8] + 1) / m[0], (m[9] - 1) / m[5], (m[9] + 1) / m[5]]
        assert all(abs(a - b) < 1e-6 for a, b in zip(sent['position'], position)), (sent['position'], position)
        assert same_rotation(sent['orientation'], orientation), (sent['orientation'], orientation)
        assert all(abs(a - b) < 1e-6 for a, b in zip(sent['frustum'], frustum)), (sent['frustum'], frustum)
    # Gaze: the scripted gaze ray, 3 degrees below the head's direction, in the left eye's image.
    left = pose['views'][0]['frustum']
    expected_v = (left[3] - math.tan(math.radians(-3))) / (left[3] - left[2])
    expected_u = (0 - left[0]) / (left[1] - left[0])
    assert abs(pose['gaze'][0] - expected_u) < 1e-4 and abs(pose['gaze'][1] - expected_v) < 1e-4, (pose['gaze'], expected_u, expected_v)

    frame = wait_for_frame_of_pose(c, pose['id'])
    assert frame['eyes'] == 2, frame
    wait_until_quiet(c)
    assert len([p for p in pose_messages(c) if 'views' in p]) == 1, 'a still headset sent its pose more than once'

    # The workers' eyes against tessera-render of the same eyes: the first frame of the pose (pixel
    # centres, written losslessly by --out as frame_<F-1>.png) pixel for pixel; the page's last frame,
    # refined with jittered samples while the headset held still, converges to tessera-render --aa.
    of_pose = [f for f in frames(c) if f['pose_id'] == pose['id']]
    assert of_pose[0]['samples'] == 1, of_pose
    png = out / f'frame_{of_pose[0]["frame"] - 1:06d}.png'
    assert png.exists(), f'the master wrote no {png.name} (frames: {sorted(p.name for p in out.glob("*.png"))})'
    centres = tessera_render_eyes(c, pose)
    exact = compare(c, png, centres)
    assert exact['mse'] == 0, f'the eyes of frame {of_pose[0]["frame"]} differ from tessera-render --eye-view: {exact}'
    refined = of_pose[-1]['samples']
    assert refined == last_session(c)['max_samples'], f'refinement stopped at {refined} samples'
    shown = last_frame_png(c, c.dir / 'refined.png')
    to_aa = compare(c, shown, tessera_render_eyes(c, pose, aa=refined))
    to_centres = compare(c, shown, centres)
    assert to_aa['psnr'] > 30 and to_aa['mse'] < to_centres['mse'] / 2, \
        f'the refined frame ({refined} samples) is not the --aa {refined} render: {to_aa} vs pixel centres {to_centres}'

    # The XR layer shows the latest frame: each eye viewport holds that eye's half of the image.
    difference = c.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const gl = window.__fakeXr.gl;
        const then = ({width, height, data: image}) => {
          const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
          if (w !== width || h !== height) return done(`layer ${w}x${h}, image ${width}x${height}`);
          const drawn = new Uint8Array(w * h * 4);
          gl.bindFramebuffer(gl.FRAMEBUFFER, null);
          gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, drawn);
          let worst = 0;
          for (let y = 0; y < h; ++y)
            for (let x = 0; x < w * 4; ++x)
              if (x % 4 !== 3) worst = Math.max(worst, Math.abs(drawn[(h - 1 - y) * w * 4 + x] - image[y * w * 4 + x]));
          done(worst);
        };""" + DECODE_LAST_FRAME_JS)
    assert difference == 0 or (isinstance(difference, int) and difference <= 2), f'XR layer differs from the frame: {difference}'
    assert c.js('return window.__fakeXr.frames') > 10, 'the XR session loop is not running'


def tessera_render_eyes(c, pose, aa=1):
    """tessera-render of the pose's two eyes (--eye-view), `aa` jittered samples a pixel; returns the PNG."""
    reference = c.dir / f'reference_aa{aa}.png'
    eyes = []
    for view in pose['views']:
        eyes += ['--eye-view', ','.join(repr(float(x)) for x in (*view['position'], *view['orientation'], *view['frustum']))]
    render = subprocess.run([str(c.build / 'worker/tessera-render'), str(c.dir / 'scenes' / 'cornell.tpk'), '--size', '160x120',
                             '--device', 'host', *eyes, *(['--aa', str(aa)] if aa > 1 else []), '-o', str(reference)],
                            capture_output=True, text=True)
    assert render.returncode == 0, f'tessera-render failed: {render.stderr}'
    return reference


def compare(c, a, b):
    result = subprocess.run([str(c.build / 'master/tessera-compare'), '--json', str(a), str(b)], capture_output=True, text=True)
    assert result.returncode == 0, f'tessera-compare: {result.stdout}{result.stderr}'
    return json.loads(result.stdout)


def case_bands(c, args):
    """Frames of more rows than two bands' minimum come as JPEG bands: the page decodes them in
    parallel and draws each at its rows, so its canvas is exactly the bands decoded and stacked; its
    `displayed` reports say when each frame came, was decoded and drawn, and the master's status
    gives the driving page's medians of those stages back for the dashboard."""
    c.start_workers()
    c.start_master('--mode', 'raytrace', '--max-samples', '2', '--jpeg-threads', '2', size='160x300', tile=40)
    c.open_page()
    frame = c.wait_for('a frame in two bands', lambda: next((f for f in frames(c) if len(f.get('bands', [])) == 2), None))
    assert frame['format'] == 2 and frame['bands'][1]['y'] == 160, frame
    wait_until_quiet(c)
    c.wait_for('the last frame drawn', lambda: hud(c, 'frame') == str(frames(c)[-1]['frame']))
    worst = c.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        const shown = document.getElementById('frame-canvas');
        const then = ({width, height, data}) => {
          if (shown.width !== width || shown.height !== height) return done(`canvas ${shown.width}x${shown.height}, frame ${width}x${height}`);
          const page = shown.getContext('2d').getImageData(0, 0, width, height).data;
          let worst = 0;
          for (let i = 0; i < data.length; ++i) worst = Math.max(worst, Math.abs(page[i] - data[i]));
          done(worst);
        };""" + DECODE_LAST_FRAME_JS)
    assert worst == 0, f'the canvas is not the bands decoded and stacked: {worst}'

    reports = [m for m in c.socket_log('sent') if m.get('type') == 'displayed']
    assert reports, 'the page reported no frame displayed'
    for report in reports:
        assert report['received'] <= report['decoded'] <= report['t'], report
    status = c.wait_for('a status with the page\'s stages',
                        lambda: next((m for m in reversed(c.socket_log('text')) if m.get('type') == 'status'
                                      and m.get('page_ms', {}).get('decode', 0) > 0), None), timeout=10)
    assert status['page_ms']['network'] >= 0 and status['page_ms']['draw'] >= 0, status
    c.wait_for('the dashboard showing them', lambda: 'decode' in c.js("return document.getElementById('master-status').textContent"))


def case_worker_loss(c, args):
    """Killing a worker mid-session: the page keeps getting frames, and shows the loss as an event."""
    c.start_workers()
    c.start_master('--mode', 'raytrace')
    c.open_page()
    c.driver.find_element('id', 'view').click()
    c.workers[1].kill()
    for key in ('d', 'a', 'w'):
        press(c, key, 0.3)
        wait_for_frame_of_pose(c, pose_messages(c)[-1]['id'])
    c.wait_for('a worker-lost event on the page',
               lambda: 'lost' in c.js("return document.getElementById('events').innerText"))
    assert c.master.running(), 'the master exited after losing a worker'


def case_master_restart(c, args):
    """A master that stops tells its pages why; one restarted on the same port with a new token is
    named as the reason the page cannot reconnect, and one restarted with the old token takes it back."""
    c.start_workers()
    c.start_master('--mode', 'raytrace')
    c.open_page()
    port, token = c.origin().rsplit(':', 1)[1], c.token()
    events = lambda: c.js("return document.getElementById('events').innerText")
    c.wait_for('the page connected', lambda: c.js("return document.getElementById('connection').textContent") == 'connected')
    c.master.stop()
    c.wait_for('the reason the master stopped on the page', lambda: 'the master was stopped' in events(), timeout=20)
    c.start_master('--mode', 'raytrace', serve=f'127.0.0.1:{port}')
    assert c.token() != token, 'the restarted master kept the token'
    c.wait_for('the stale token named on the page', lambda: "no longer accepts this page's token" in events(), timeout=40)
    c.master.stop()
    c.start_master('--mode', 'raytrace', '--token', token, serve=f'127.0.0.1:{port}')
    c.wait_for('the page back with the old token', lambda: c.js("return document.getElementById('connection').textContent") == 'connected',
               timeout=40)


def case_bad_messages(c, args):
    """Garbage and oversized messages from a page close that page's connection only."""
    c.start_workers()
    c.start_master('--mode', 'raytrace')
    c.open_page()
    bad = {
        'not JSON': "'this is not json'",
        'unknown type': "JSON.stringify({type: 'launch_missiles'})",
        'bad field': "JSON.stringify({type: 'pose', id: 'seven', t: 1, position: [0, 0], orientation: [1, 0, 0, 0]})",
        'binary': 'new Uint8Array([1, 2, 3, 4])',
        'oversized': "JSON.stringify({type: 'pose', padding: 'x'.repeat(70 * 1024)})",
    }
    for name, message in bad.items():
        result = connection_closes(c, message)
        assert result['opened'], f'{name}: the second socket did not open'
        assert result['code'] in (1008, 1009), f'{name}: closed with {result}, expected 1008 or 1009'
    assert c.master.running(), 'the master exited'
    assert c.js("return document.getElementById('connection').textContent") == 'connected', 'the page lost its connection'
    assert 'connection closed' not in c.js("return document.getElementById('events').innerText"), 'the page was disconnected'
    c.driver.find_element('id', 'view').click()
    press(c, 'd', 0.3)
    wait_for_frame_of_pose(c, pose_messages(c)[-1]['id'])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--build', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--shared', required=True, help='the shared scenes, unless $TESSERA_SHARED_DIR is set')
    parser.add_argument('--artifacts', help='folder for the page screenshot')
    parser.add_argument('--keep', help='copy the session folder (logs, frames) here')
    parser.add_argument('case', choices=[name[5:] for name in globals() if name.startswith('case_')])
    args = parser.parse_args()
    shared = os.environ.get('TESSERA_SHARED_DIR') or args.shared
    c = LiveCluster(args.build, args.source, shared, args.keep)
    try:
        globals()['case_' + args.case](c, args)
    except Skip as skip:
        print(f'SKIPPED: {skip}')
        return SKIP
    except AssertionError as failure:
        traceback.print_exc()
        print(f'FAILED: {failure}')
        return 1
    finally:
        c.stop()
    print(f'passed: {args.case}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
