#!/usr/bin/env python3
"""The live page in a real browser: headless Chromium on tessera-master --serve with two local workers.

    live_page_test.py --build B --source S --shared D [--artifacts A] CASE

D holds the shared scenes; $TESSERA_SHARED_DIR, when set at run time, takes its place (as for the
other tests). CASE is one of the functions named case_* below. Exit status 0 passed, 1 failed, 77 skipped (no
browser installed here)."""
import json
import math
import subprocess
import sys
import time
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, str(Path(__file__).parent))
from live_cluster import fake_xr_script, run_case  # noqa: E402


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
    """Opens a second socket (the page's session cookie authenticates it), says hello, sends what
    `message_js` evaluates to; returns {opened, code, reason} once the master closes it (code 0: still
    open after 10 s)."""
    return c.driver.execute_async_script(f"""
        const done = arguments[arguments.length - 1];
        const ws = new WebSocket(`wss://${{location.host}}/ws`);
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
    # The QR code of the page's address, where the master draws one.
    qr_served = c.http_get(f'/qr.svg?token={token}')[0] == 200
    c.wait_for('the QR code shown' if qr_served else 'no QR code', lambda: c.js(
        "const img = document.getElementById('qr-image'); return !document.getElementById('qr').hidden && img.complete && img.naturalWidth > 0")
        == qr_served, timeout=10)
    assert c.js("return document.getElementById('role').textContent") == 'driving'
    # The page holds the session cookie: a wrong token is refused all the same (a missing one is
    # refused without the cookie: case web_security).
    for query in (f'?token={wrong}',):
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


CSP_RECORDER_JS = """
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation',
        (e) => window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`));"""


def case_web_security(c, args):
    """The token is exchanged for an HttpOnly session cookie and leaves the address bar; a reload and
    the WebSocket come by the cookie; the page's responses carry a Content-Security-Policy it keeps
    to (no violation reported) and Referrer-Policy: no-referrer."""
    c.start_workers()
    c.start_master()
    c.open_page([CSP_RECORDER_JS])
    assert 'token' not in c.driver.current_url, f'the token stayed in the address: {c.driver.current_url}'
    assert c.js("return location.search") == '', c.js("return location.href")
    assert 'tessera-live' not in c.js("return document.cookie"), 'the session cookie is readable by scripts'
    assert c.js("return document.getElementById('connection').textContent") == 'connected'
    headers = c.driver.execute_async_script("""
        const done = arguments[arguments.length - 1];
        fetch('/', {cache: 'no-store'}).then((r) => done({status: r.status,
            csp: r.headers.get('content-security-policy'), referrer: r.headers.get('referrer-policy')}));""")
    assert headers['status'] == 200, f'the page by its cookie: {headers}'
    for directive in ("script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"):
        assert directive in (headers['csp'] or ''), f'{directive} missing from {headers["csp"]}'
    assert headers['referrer'] == 'no-referrer', headers

    assert not c.js("return window.__cspViolations"), c.js("return window.__cspViolations")

    # A reload comes by the cookie, and so does its WebSocket (the frames go on).
    frames_before = len(frames(c))
    c.driver.refresh()
    c.wait_for('the reloaded page connected with a frame', lambda: c.js(
        "return document.getElementById('connection').textContent === 'connected' && "
        "document.getElementById('hud-frame').textContent !== '-'"))
    assert c.js("return location.search") == ''
    assert frames_before > 0
    # Without the cookie (Python, no browser) the page and the socket stay shut.
    assert c.http_get('/')[0] == 403
    qr_served = c.http_get(f'/qr.svg?token={c.token()}')[0] == 200
    c.wait_for('the QR code by the cookie' if qr_served else 'no QR code', lambda: c.js(
        "const img = document.getElementById('qr-image'); return !document.getElementById('qr').hidden && img.complete && img.naturalWidth > 0")
        == qr_served, timeout=10)
    time.sleep(1)  # frames drawn, the QR code shown: anything the policy blocks has been reported
    violations = c.js("return window.__cspViolations")
    console = [str(e) for e in c.driver.get_log('browser') if 'Content Security Policy' in str(e)]
    assert not violations and not console, f'CSP violations: {violations} {console}'


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


def projection(left, right, bottom, top, near=0.05, far=100.0):
    """A column-major off-axis perspective projection matrix (as XRView.projectionMatrix)."""
    m = [0.0] * 16
    m[0] = 2 / (right - left)
    m[5] = 2 / (top - bottom)
    m[8] = (right + left) / (right - left)
    m[9] = (top + bottom) / (top - bottom)
    m[10] = -(far + near) / (far - near)
    m[11] = -1
    m[14] = -2 * far * near / (far - near)
    return m


BASE_VIEWER = [0.01, 0.02, -0.03]


def xr_pose(yaw_degrees=5.0, viewer=BASE_VIEWER, pitch_degrees=0.0):
    """The scripted headset's viewer and eyes (XR space, metres): the head turned `yaw_degrees` to the
    left (then pitched), the eyes 64 mm apart."""
    half = math.radians(yaw_degrees) / 2
    pitch = math.radians(pitch_degrees) / 2
    w, x, y, z = quat_mul([math.cos(half), 0, math.sin(half), 0], [math.cos(pitch), math.sin(pitch), 0, 0])
    head = {'x': x, 'y': y, 'z': z, 'w': w}
    def eye(offset):
        right = quat_rotate([w, x, y, z], [1, 0, 0])
        return [viewer[k] + offset * right[k] for k in range(3)]
    return {
        'viewer': {'position': list(viewer), 'orientation': head},
        'views': [
            {'eye': 'left', 'position': eye(-0.032), 'orientation': head, 'projection': projection(-0.58, 0.42, -0.38, 0.40)},
            {'eye': 'right', 'position': eye(0.032), 'orientation': head, 'projection': projection(-0.42, 0.58, -0.38, 0.40)},
        ],
    }


def xr_config(ar=None, eye_size=(160, 120)):
    """Known viewer and eye poses (XR space, metres) and off-axis projections for the scripted headset;
    `ar`: the environment blend mode of its immersive-ar sessions (None: it offers VR only); `eye_size`:
    its layer's pixels per eye."""
    pose = xr_pose()
    head = pose['viewer']['orientation']
    gaze_half = math.radians(3) / 2  # eyes looking 3 degrees down from the head's direction
    w, x, y, z = quat_mul([head['w'], 0, head['y'], 0], [math.cos(gaze_half), -math.sin(gaze_half), 0, 0])
    gaze = {'x': x, 'y': y, 'z': z, 'w': w}  # head * rotation by -3 degrees about x
    return {'eyeWidth': eye_size[0], 'eyeHeight': eye_size[1], **pose, 'gaze': {'orientation': gaze}, **({'ar': {'blendMode': ar}} if ar else {})}


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
    # No guard band (start_master's default): the frame holds exactly the eyes asked for, so it compares
    # with them pixel for pixel.
    c.start_master('--mode', 'raytrace', '--out', str(out))
    c.open_page([fake_xr_script(config)])
    pose = enter_xr(c)
    sent = c.socket_log('sent')
    assert any(m.get('type') == 'take_control' for m in sent), 'entering the headset did not take control'
    assert next(m for m in sent if m.get('type') == 'hello').get('depth') is True, 'the hello does not ask for depth'

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

    # The eye images follow the layer's per-eye resolution times the quality factor.
    from selenium.webdriver.support.ui import Select
    Select(c.driver.find_element('id', 'quality')).select_by_value('0.5')
    c.wait_for('the eye size for quality 0.5 sent', lambda: any(m.get('type') == 'settings' and m.get('size') == [80, 60]
                                                                for m in c.socket_log('sent')), timeout=10)


def enter_xr(c, button='enter-vr'):
    """Enters the scripted immersive session with the headset's status panel off (the tests compare the
    layer's pixels) and returns the first pose with eye views the page sent."""
    c.wait_for(f'the {button} button', lambda: c.js(f"return !document.getElementById('{button}').hidden"))
    c.driver.find_element('id', 'xr-panel').click()
    c.driver.find_element('id', button).click()
    return c.wait_for('a pose with eye views', lambda: next((p for p in pose_messages(c) if 'views' in p), None))


def xr_frames_pass(c, count=3):
    """Waits until the XR session has drawn `count` more display frames."""
    start = c.js('return window.tessera.xr.displayFrames')
    c.wait_for(f'{count} XR frames drawn', lambda: c.js('return window.tessera.xr.displayFrames') >= start + count, timeout=10, interval=0.02)


def layer_png(c, path, clear=None):
    """The XR layer (both eyes) written to `path` as PNG; returns the number of its pixels equal to the
    RGBA `clear` (0..255) when given."""
    result = c.js("""
        const gl = window.__fakeXr.gl, clear = arguments[0];
        const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
        const pixels = new Uint8Array(w * h * 4);
        gl.bindFramebuffer(gl.FRAMEBUFFER, null);
        gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
        let cleared = 0;
        if (clear) for (let i = 0; i < pixels.length; i += 4)
          if (pixels[i] === clear[0] && pixels[i + 1] === clear[1] && pixels[i + 2] === clear[2] && pixels[i + 3] === clear[3]) ++cleared;
        return [gl.canvas.toDataURL('image/png'), cleared];""", clear)
    import base64
    Path(path).write_bytes(base64.b64decode(result[0].split(',', 1)[1]))
    return result[1]


def scene_anchor(c):
    """The XR -> scene mapping the page starts a session with: the scene camera's position, turned by its
    heading only, metres scaled by units_per_meter; returns a function of an XR-space pose."""
    scene = last_session(c)['scene']
    camera = scene['camera']
    scale = scene.get('units_per_meter') or 1
    forward = quat_rotate(camera['orientation'], [0, 0, -1])
    yaw = math.atan2(-forward[0], -forward[2])
    anchor = [math.cos(yaw / 2), 0, math.sin(yaw / 2), 0]
    def to_scene(position, orientation):
        local = [x * scale for x in position]
        return ([a + b for a, b in zip(camera['position'], quat_rotate(anchor, local))],
                quat_mul(anchor, [orientation['w'], orientation['x'], orientation['y'], orientation['z']]))
    return to_scene


def case_reprojection(c, args, eye_size=(160, 120), motions=3, master_args=()):
    """Workers frozen after a frame at pose P, the head turned 5 and 10 degrees and moved 5 cm: what the
    layer shows (the frame reprojected to the new eyes) is much nearer tessera-render at the new pose
    than the stale frame pasted as it was, and no pixel is left at the clear colour."""
    c.start_workers()
    c.start_master('--mode', 'raytrace', '--max-samples', '1', *master_args, guard_band=3)  # tessera-master's default
    c.open_page([fake_xr_script(xr_config(eye_size=eye_size))])
    pose = enter_xr(c)
    frame = wait_for_frame_of_pose(c, pose['id'])
    wait_until_quiet(c)
    c.wait_for('the frame drawn in the headset', lambda: c.js('return window.tessera.xr.drawLog.at(-1)?.frame') == frames(c)[-1]['frame'])
    depth = 'depth' in frames(c)[-1]
    c.js('window.tessera.xr.clearColour = [1, 0, 1, 1]')  # a colour the Cornell box has nowhere
    c.pause_workers()
    rows = []
    try:
        for name, yaw, viewer in (('turned 5 deg', 10, BASE_VIEWER), ('turned 10 deg', 15, BASE_VIEWER),
                                  ('moved 5 cm', 5, [BASE_VIEWER[0] + 0.05, BASE_VIEWER[1], BASE_VIEWER[2]]))[:motions]:
            sent = len(pose_messages(c))
            c.js('window.__fakeXr.setPose(arguments[0])', xr_pose(yaw, viewer))
            moved = c.wait_for(f'the pose {name} sent', lambda: pose_messages(c)[sent:] and pose_messages(c)[-1])
            xr_frames_pass(c)
            cleared = layer_png(c, c.dir / 'reprojected.png', [255, 0, 255, 255])
            c.driver.find_element('id', 'reproject').click()
            xr_frames_pass(c)
            layer_png(c, c.dir / 'stale.png')
            c.driver.find_element('id', 'reproject').click()
            reference = tessera_render_eyes(c, moved, size=f'{eye_size[0]}x{eye_size[1]}')
            stale = compare(c, c.dir / 'stale.png', reference)['psnr']
            reprojected = compare(c, c.dir / 'reprojected.png', reference)['psnr']
            rows.append((name, stale, reprojected, cleared))
            if args.artifacts:
                tag = name.split(' ', 1)[1].replace(' ', '') + ('' if eye_size == (160, 120) else f'_{eye_size[0]}')
                for image, path in (('stale', c.dir / 'stale.png'), ('reprojected', c.dir / 'reprojected.png'), ('reference', reference)):
                    (Path(args.artifacts) / f'xr_{tag}_{image}.png').write_bytes(Path(path).read_bytes())
    finally:
        c.resume_workers()
    plane = frames(c)[-1].get('depth', {})
    print(f'frame {frame["frame"]} at {eye_size[0]}x{eye_size[1]} an eye {"with depth, one sample per " + str(plane.get("scale", 1)) + "^2 pixels" if depth else "without depth"}; '
          'PSNR against tessera-render at the new pose:')
    print(f'{"":>14}  {"stale dB":>9}  {"reprojected dB":>14}')
    for name, stale, reprojected, _ in rows:
        print(f'{name:>14}  {stale:9.2f}  {reprojected:14.2f}')
    for name, _, _, cleared in rows:
        assert cleared == 0, f'{name}: {cleared} pixels of the layer left at the clear colour'
    name, stale, reprojected, _ = rows[0]
    assert reprojected >= stale + 6, f'{name}: reprojected {reprojected:.2f} dB does not beat stale {stale:.2f} dB by 6 dB'
    if depth and len(rows) > 2:
        name, stale, reprojected, _ = rows[2]
        assert reprojected > stale, f'{name}: with depth, reprojected {reprojected:.2f} dB is no nearer than stale {stale:.2f} dB'


def case_reprojection_coarse_depth(c, args):
    """The same at 480x360 an eye (545 wide with the guard band), where the master sends one depth sample
    per 3x3 pixels (the depth plane of frames wider than 256 pixels an eye): the page maps each eye's
    image onto its coarser depth."""
    # The 5-degree turn alone, and workers kept while stopped: software GL draws these eyes slowly.
    case_reprojection(c, args, eye_size=(480, 360), motions=1, master_args=('--heartbeat-timeout', '120'))
    assert frames(c)[-1].get('depth', {}).get('scale', 1) > 1, frames(c)[-1].get('depth')


def canvas_png(c, element_id, path):
    import base64
    data = c.js(f"return document.getElementById('{element_id}').toDataURL('image/png')")
    Path(path).write_bytes(base64.b64decode(data.split(',', 1)[1]))
    return path


def case_flat_reprojection(c, args):
    """The flat view with the workers frozen: a drag turns the camera and the view over the frame canvas
    follows at once (the frame reprojected to the camera's pose), nearer tessera-render at the new pose
    than what it shows with reproject unchecked (the frame as it was rendered)."""
    c.start_workers()
    c.start_master('--mode', 'raytrace', '--max-samples', '1')
    c.open_page()
    wait_until_quiet(c)
    c.pause_workers()
    try:
        from selenium.webdriver.common.action_chains import ActionChains
        sent = len(pose_messages(c))
        view = c.driver.find_element('id', 'view')
        ActionChains(c.driver).move_to_element(view).click_and_hold().move_by_offset(-30, 0).pause(0.2).release().perform()
        turned = c.wait_for('the turned pose sent', lambda: pose_messages(c)[sent:] and pose_messages(c)[-1])
        time.sleep(0.3)
        canvas_png(c, 'reprojected-canvas', c.dir / 'flat_reprojected.png')
        c.driver.find_element('id', 'reproject').click()
        time.sleep(0.3)
        canvas_png(c, 'reprojected-canvas', c.dir / 'flat_stale.png')
    finally:
        c.resume_workers()
    session = last_session(c)
    top = math.tan(math.radians(session['scene']['camera']['fov']) / 2)
    right = top * session['size'][0] / session['size'][1]
    reference = tessera_render_eyes(c, {'views': [{'position': turned['position'], 'orientation': turned['orientation'],
                                                   'frustum': [-right, right, -top, top]}]})
    stale = compare(c, c.dir / 'flat_stale.png', reference)['psnr']
    reprojected = compare(c, c.dir / 'flat_reprojected.png', reference)['psnr']
    print(f'flat view turned by a drag: stale {stale:.2f} dB, reprojected {reprojected:.2f} dB')
    assert reprojected >= stale + 3, f'the reprojected flat view ({reprojected:.2f} dB) is no nearer the new pose than the frame ({stale:.2f} dB)'


# Every display frame a new head pose, turning `degrees_per_s`; with `noise`, tracking noise about a
# still head instead (+-0.02 degrees, +-0.1 mm).
MOVE_HEAD_JS = """
    const [degreesPerS, noise, views] = arguments;
    const start = performance.now();
    const step = () => {
      if (!window.__moveHead) return;
      const seconds = (performance.now() - start) / 1000;
      const random = () => Math.random() * 2 - 1;
      const yaw = (5 + (noise ? 0.02 * random() : degreesPerS * seconds)) * Math.PI / 360;
      const orientation = {x: 0, y: Math.sin(yaw), z: 0, w: Math.cos(yaw)};
      const shift = noise ? [1e-4 * random(), 1e-4 * random(), 1e-4 * random()] : [0, 0, 0];
      const at = (p) => p.map((v, k) => v + shift[k]);
      window.__fakeXr.setPose({viewer: {position: at(%s), orientation},
        views: views.map((v) => ({...v, position: at(v.position), orientation}))});
      requestAnimationFrame(step);
    };
    window.__moveHead = true;
    requestAnimationFrame(step);""" % json.dumps(BASE_VIEWER)


def case_display_rate(c, args):
    """A slow cluster (about 2 frames a second) and a headset at display rate: tracking noise sends no
    pose (a dead band, one resend a second), and while the head turns every display frame draws the
    newest frame reprojected to that display frame's own eye poses."""
    c.start_workers(slowdown_ms=20)
    c.start_master('--mode', 'raytrace', '--max-samples', '1')
    c.open_page([fake_xr_script(xr_config())])
    pose = enter_xr(c)
    wait_for_frame_of_pose(c, pose['id'])
    views = xr_pose()['views']

    c.js(MOVE_HEAD_JS, 0, True, views)
    sent = len(pose_messages(c))
    time.sleep(2.5)
    noisy = len(pose_messages(c)) - sent
    assert noisy <= 3, f'{noisy} poses sent in 2.5 s of tracking noise (dead band: at most one a second)'
    c.js('window.__moveHead = false')

    received, drawn, xr_frames = len(frames(c)), c.js('return window.tessera.xr.displayFrames'), c.js('return window.__fakeXr.frames')
    log_start = c.js('return window.tessera.xr.drawLog.length')
    time.sleep(0.1)
    c.js(MOVE_HEAD_JS, 20, False, views)
    time.sleep(4)
    c.js('window.__moveHead = false')
    received = len(frames(c)) - received
    drawn = c.js('return window.tessera.xr.displayFrames') - drawn
    xr_frames = c.js('return window.__fakeXr.frames') - xr_frames
    print(f'4 s turning 20 deg/s: {received} frames received, {xr_frames} XR frames, {drawn} drawn reprojected')
    assert 2 <= received <= 16, f'{received} frames in 4 s: not a slow cluster'
    assert drawn >= 0.9 * xr_frames and drawn >= 3 * received, f'{drawn} draws for {xr_frames} XR frames, {received} frames'

    # Each display frame drew with its own pose: the eyes the shader got are that frame's scripted eyes.
    to_scene = scene_anchor(c)
    log = c.js('return window.tessera.xr.drawLog')
    poses = {p['t']: p for p in c.js('return Object.values(window.__fakeXr.poses).slice(-600)')}
    checked = 0
    for entry in log[-min(len(log), 150):]:
        scripted = poses.get(entry['t'])
        if not scripted:
            continue
        for drawn_eye, view in zip(entry['eyes'], scripted['views']):
            position, orientation = to_scene(view['position'], view['orientation'])
            assert all(abs(a - b) < 1e-3 for a, b in zip(drawn_eye['position'], position)), (entry, view)
            assert same_rotation(drawn_eye['orientation'], orientation, 1e-7), (entry, view)
        checked += 1
    frames_shown = {entry['frame'] for entry in log[-150:]}
    print(f'{checked} display frames checked against their scripted eyes; they showed {len(frames_shown)} different frames')
    assert checked >= 100 and len(frames_shown) >= 2, (checked, frames_shown)


def case_xr_panel(c, args):
    """The headset's status panel: connected and the rates while all is well, "frames stalled" when the
    head moves and no frame follows for half a second (workers frozen), "master gone" when it stops;
    the panel is drawn into both eyes of the layer."""
    c.start_workers()
    c.start_master('--mode', 'raytrace', '--max-samples', '1')
    c.open_page([fake_xr_script(xr_config())])
    c.wait_for('the Enter VR button', lambda: c.js("return !document.getElementById('enter-vr').hidden"))
    c.driver.find_element('id', 'enter-vr').click()
    panel = lambda: [line['text'] for line in c.js('return window.tessera.xr.panel?.lines ?? []')]
    c.wait_for('the panel saying connected', lambda: any(t.startswith('connected, driving') for t in panel()))
    wait_until_quiet(c)
    xr_frames_pass(c)
    without = c.dir / 'without_panel.png'
    with_panel = c.dir / 'with_panel.png'
    layer_png(c, with_panel)
    c.driver.find_element('id', 'xr-panel').click()
    xr_frames_pass(c)
    layer_png(c, without)
    c.driver.find_element('id', 'xr-panel').click()
    difference = compare(c, with_panel, without)
    assert difference['mse'] > 0, 'the panel drew nothing into the layer'
    if args.artifacts:
        (Path(args.artifacts) / 'xr_panel.png').write_bytes(with_panel.read_bytes())
    c.pause_workers()
    try:
        c.js('window.__fakeXr.setPose(arguments[0])', xr_pose(12))
        c.wait_for('"frames stalled" on the panel', lambda: any(t.startswith('frames stalled') for t in panel()), timeout=10)
    finally:
        c.resume_workers()
    c.wait_for('the stall over', lambda: not any(t.startswith('frames stalled') for t in panel()), timeout=20)
    c.master.stop()
    c.wait_for('"master gone" on the panel', lambda: any(t.startswith('master gone') for t in panel()), timeout=10)


# The XR layer drawn over a checkerboard (the "real world" behind a see-through display), as PNG bytes,
# and the layer's alpha at its four corners and the most opaque alpha in it.
AR_COMPOSITE_JS = """
    const gl = window.__fakeXr.gl;
    const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
    const pixels = new Uint8Array(w * h * 4);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
    const alpha = (x, y) => pixels[(y * w + x) * 4 + 3];
    let most = 0;
    for (let i = 3; i < pixels.length; i += 4) most = Math.max(most, pixels[i]);
    const canvas = document.createElement('canvas');
    canvas.width = w;
    canvas.height = h;
    const g = canvas.getContext('2d');
    for (let y = 0; y < h; y += 10) for (let x = 0; x < w; x += 10) {
      g.fillStyle = (x / 10 + y / 10) % 2 ? '#8a9a5b' : '#d8d2c4';
      g.fillRect(x, y, 10, 10);
    }
    g.drawImage(gl.canvas, 0, 0);
    return [canvas.toDataURL('image/png'), [alpha(0, 0), alpha(w - 1, 0), alpha(0, h - 1), alpha(w - 1, h - 1)], most];"""


def case_ar(c, args):
    """A scripted see-through headset (immersive-ar, alpha-blend): entering asks for a transparent
    background; a hit test and a tap place the scene's floor on the real surface (a `place` message, the
    page's anchor moves there); a light estimate becomes a `light` message in scene space; the layer is
    transparent where the scene has nothing; leaving asks for the opaque background again."""
    c.start_workers()
    c.start_master('--mode', 'raytrace', '--max-samples', '1')
    c.open_page([fake_xr_script(xr_config(ar='alpha-blend'))])
    enter_xr(c, 'enter-ar')
    sent = c.socket_log('sent')
    assert any(m.get('type') == 'take_control' for m in sent), 'entering AR did not take control'
    assert any(m.get('type') == 'settings' and m.get('background') == 'transparent' for m in sent), \
        'entering a see-through AR session did not ask for a transparent background'
    assert c.js('return window.__fakeXr.hitTestSources') == 1 and c.js('return window.__fakeXr.lightProbes') == 1

    # Tap to place: the middle of the scene's floor goes to the hit point, 2 m ahead and 0.45 m down.
    session = last_session(c)
    bounds, scale = session['scene']['bounds'], session['scene'].get('units_per_meter') or 1
    floor_y = session['shadow_catcher'] if isinstance(session.get('shadow_catcher'), (int, float)) else bounds[0][1]
    floor = [(bounds[0][0] + bounds[1][0]) / 2, floor_y, (bounds[0][2] + bounds[1][2]) / 2]
    hit = [0.1, -0.45, -2.0]
    c.js('window.__fakeXr.hits = [arguments[0]]', hit)
    xr_frames_pass(c)
    poses_before = len(pose_messages(c))
    c.js('window.__fakeXr.select()')
    place = c.wait_for('a place message', lambda: next((m for m in c.socket_log('sent') if m.get('type') == 'place'), None), timeout=10)
    assert all(abs(a - b) < 1e-6 for a, b in zip(place['floor'], floor)), (place, floor)
    to_scene = scene_anchor(c)  # before placing: the anchor at the scene camera, heading only
    camera_at_hit, heading = to_scene(hit, {'x': 0, 'y': 0, 'z': 0, 'w': 1})
    expected_anchor = [f - (p - q) for f, p, q in zip(floor, camera_at_hit, last_session(c)['scene']['camera']['position'])]
    anchor = c.js('return window.tessera.xr.anchorPosition')
    assert all(abs(a - b) < 1e-6 * scale for a, b in zip(anchor, expected_anchor)), (anchor, expected_anchor)
    moved = c.wait_for('a pose from the placed anchor', lambda: pose_messages(c)[poses_before:] and pose_messages(c)[-1], timeout=10)
    viewer = xr_pose()['viewer']['position']
    expected = [a + (p - q) for a, p, q in zip(expected_anchor, to_scene(viewer, {'x': 0, 'y': 0, 'z': 0, 'w': 1})[0],
                                               last_session(c)['scene']['camera']['position'])]
    assert all(abs(a - b) < 1e-6 * scale for a, b in zip(moved['position'], expected)), (moved['position'], expected)

    # Light estimation: the light comes from up, right and behind; the sun travels the other way.
    wait_for_frame_of_pose(c, moved['id'])
    wait_until_quiet(c)
    unlit = c.canvas_digest()
    towards = [0.3, 0.8, 0.2]
    c.js('window.__fakeXr.light = {direction: arguments[0], intensity: [2.0, 1.9, 1.7]}', towards)
    light = c.wait_for('a light message', lambda: next((m for m in c.socket_log('sent') if m.get('type') == 'light'), None), timeout=10)
    n = math.sqrt(sum(v * v for v in towards))
    expected_direction = quat_rotate(heading, [-v / n for v in towards])
    assert all(abs(a - b) < 1e-6 for a, b in zip(light['direction'], expected_direction)), (light, expected_direction)
    assert light['irradiance'] == [2.0, 1.9, 1.7], light
    xr_frames_pass(c, 40)
    lights = [m for m in c.socket_log('sent') if m.get('type') == 'light']
    assert len(lights) == 1, f'an unchanged light estimate was sent {len(lights)} times'
    if 'sun' in last_session(c):  # masters that take the sun from the page: the picture changes
        c.wait_for('the session naming the estimated sun', lambda: last_session(c).get('sun'), timeout=10)
        c.wait_for('a frame lit by the estimated sun', lambda: c.canvas_digest() != unlit, timeout=30)

    # The layer: transparent where the scene has nothing, once the master renders a transparent background.
    if 'background' not in last_session(c):
        print('this master knows no AR messages (it closes the connection on them): the rest is not checked')
        return
    wait_for_frame_of_pose(c, moved['id'])
    alpha_frames = [f for f in frames(c) if 'alpha' in f and f['pose_id'] >= moved['id']]
    if alpha_frames:
        c.wait_for('the frame with alpha drawn', lambda: c.js('return window.tessera.xr.drawLog.at(-1)?.frame') >= alpha_frames[-1]['frame'])
        xr_frames_pass(c)
        png, corners, most = c.js(AR_COMPOSITE_JS)
        assert corners == [0, 0, 0, 0] and most == 255, f'layer alpha at the corners {corners}, at most {most}'
        if args.artifacts:
            import base64
            (Path(args.artifacts) / 'ar_composite.png').write_bytes(base64.b64decode(png.split(',', 1)[1]))
    else:
        print('the master sends no alpha section yet: the layer\'s transparency is not checked')

    c.js('window.__fakeXr.session.end()')
    c.wait_for('the opaque background asked for again', lambda: any(
        m.get('type') == 'settings' and m.get('background') == 'opaque' for m in c.socket_log('sent')), timeout=10)


# The page's reprojection on its own, timed: a synthetic stereo frame (colour gradient, depth of a
# tilted plane) of `eye` pixels an eye, drawn reprojected into a layer of the same size, `count` times,
# each finished (gl.finish and a one-pixel read) before the next; resolves to ms a display frame.
# `variant`: 'depth' (the full warp), 'rotation' (a frame without depth), 'paste' (reprojection off).
REPROJECTION_COST_JS = """
    const done = arguments[arguments.length - 1];
    const [eyeWidth, eyeHeight, count, variant] = arguments;
    import('/reproject.js').then(async ({ Reprojector }) => {
      const canvas = document.createElement('canvas');
      canvas.width = 2 * eyeWidth;
      canvas.height = eyeHeight;
      const gl = canvas.getContext('webgl', { antialias: false });
      const reprojector = new Reprojector(gl);
      const image = new OffscreenCanvas(2 * eyeWidth, eyeHeight);
      const g = image.getContext('2d');
      const gradient = g.createLinearGradient(0, 0, 2 * eyeWidth, eyeHeight);
      gradient.addColorStop(0, '#204080');
      gradient.addColorStop(1, '#f0c060');
      g.fillStyle = gradient;
      g.fillRect(0, 0, 2 * eyeWidth, eyeHeight);
      const bitmap = await createImageBitmap(image);
      const depth = new Uint8Array(2 * eyeWidth * eyeHeight * 2);
      for (let y = 0; y < eyeHeight; ++y) for (let x = 0; x < 2 * eyeWidth; ++x) {
        const q = Math.round(65535 * 0.1 / (1 + 3 * y / eyeHeight));
        depth[(y * 2 * eyeWidth + x) * 2] = q & 255;
        depth[(y * 2 * eyeWidth + x) * 2 + 1] = q >> 8;
      }
      const eye = (x) => ({ position: [x, 1.6, 0], orientation: [1, 0, 0, 0], frustum: [-1, 1, -1, 1] });
      reprojector.upload({ eyes: 2, width: eyeWidth, height: eyeHeight, bands: [{ y: 0, bitmap }], views: [eye(-0.032), eye(0.032)],
        depth: variant === 'depth' ? depth : null, near: 0.1, alpha: null });
      const turned = (x, k) => ({ position: [x + 0.001 * k, 1.6, 0], orientation: [Math.cos(0.01 * k), 0, Math.sin(0.01 * k), 0], frustum: [-1, 1, -1, 1] });
      const pixel = new Uint8Array(4);
      const options = { reproject: variant !== 'paste' };
      const draw = (k) => {
        reprojector.drawEye(0, turned(-0.032, k), [0, 0, eyeWidth, eyeHeight], options);
        reprojector.drawEye(1, turned(0.032, k), [eyeWidth, 0, eyeWidth, eyeHeight], options);
        gl.finish();
        gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, pixel);
      };
      draw(0);
      const start = performance.now();
      for (let k = 1; k <= count; ++k) draw(k);
      done((performance.now() - start) / count);
    }).catch((error) => done(String(error)));"""


# reproject.js against an analytic scene: a patterned square 1.5 units in front of a patterned wall 4
# units away, traced per pixel in JavaScript with the protocol's depth encoding. The frame is rendered
# from one eye and drawn from another; resolves to the PSNR (dB) of the drawing against the scene traced
# from that other eye, with depth and without (rotation only), and the worst difference of a drawing
# from the unmoved eye against the frame itself.
SYNTHETIC_REPROJECTION_JS = """
    const done = arguments[arguments.length - 1];
    const [move, yawDegrees] = arguments;
    import('/reproject.js').then(async ({ Reprojector }) => {
      const W = 160, H = 120, near = 0.5, frustum = [-0.6, 0.6, -0.45, 0.45];
      const yaw = yawDegrees * Math.PI / 180;
      const orientation = [Math.cos(yaw / 2), 0, Math.sin(yaw / 2), 0];
      const shade = (x, y, k) => 128 + 100 * Math.sin(x * k) * Math.cos(y * k * 0.7);
      const trace = (position, turn) => {
        const rgba = new Uint8ClampedArray(W * H * 4), depth = new Uint8Array(W * H * 2);
        for (let j = 0; j < H; ++j) for (let i = 0; i < W; ++i) {
          const ex = frustum[0] + (i + 0.5) / W * (frustum[1] - frustum[0]);
          const ey = frustum[3] - (j + 0.5) / H * (frustum[3] - frustum[2]);
          const d = [ex * Math.cos(turn) - Math.sin(turn), ey, -ex * Math.sin(turn) - Math.cos(turn)];
          let t = (-1.5 - position[2]) / d[2], p = d.map((v, k) => position[k] + t * v);
          const front = Math.abs(p[0]) < 0.5 && Math.abs(p[1]) < 0.4;
          if (!front) { t = (-4 - position[2]) / d[2]; p = d.map((v, k) => position[k] + t * v); }
          const o = (j * W + i) * 4;
          rgba[o] = front ? shade(p[0], p[1], 9) : shade(p[0], p[1], 4);
          rgba[o + 1] = front ? 230 : shade(p[1], p[0], 3);
          rgba[o + 2] = front ? 40 : 90;
          rgba[o + 3] = 255;
          const q = Math.round(65535 * Math.min(1, near / t));  // t: depth along the eye's axis (d.z of the eye is -1)
          depth[(j * W + i) * 2] = q & 255;
          depth[(j * W + i) * 2 + 1] = q >> 8;
        }
        return { rgba, depth };
      };
      const source = trace([0, 0, 0], 0);
      const target = trace(move, yaw);
      const canvas = document.createElement('canvas');
      canvas.width = W;
      canvas.height = H;
      const gl = canvas.getContext('webgl', { antialias: false });
      const reprojector = new Reprojector(gl);
      const bitmap = await createImageBitmap(new ImageData(source.rgba, W, H));
      const views = [{ position: [0, 0, 0], orientation: [1, 0, 0, 0], frustum }];
      const drawn = (eye) => {
        reprojector.drawEye(0, eye, [0, 0, W, H]);
        const pixels = new Uint8Array(W * H * 4);
        gl.readPixels(0, 0, W, H, gl.RGBA, gl.UNSIGNED_BYTE, pixels);
        return pixels;
      };
      const psnr = (pixels, image) => {
        let sum = 0, worst = 0;
        for (let j = 0; j < H; ++j) for (let i = 0; i < W * 4; ++i) {
          if (i % 4 === 3) continue;
          const e = pixels[(H - 1 - j) * W * 4 + i] - image[j * W * 4 + i];
          sum += e * e;
          worst = Math.max(worst, Math.abs(e));
        }
        return [10 * Math.log10(255 * 255 / (sum / (W * H * 3))), worst];
      };
      const moved = { position: move, orientation, frustum };
      reprojector.upload({ eyes: 1, width: W, height: H, bands: [{ y: 0, bitmap }], views, depth: source.depth, near, alpha: null });
      const identity = psnr(drawn(views[0]), source.rgba)[1];
      const withDepth = psnr(drawn(moved), target.rgba)[0];
      reprojector.upload({ eyes: 1, width: W, height: H, bands: [{ y: 0, bitmap }], views, depth: null, near, alpha: null });
      const rotationOnly = psnr(drawn(moved), target.rgba)[0];
      const stale = psnr(source.rgba.map((v, k) => source.rgba[((H - 1 - Math.floor(k / (W * 4))) * W * 4) + k % (W * 4)]), target.rgba)[0];
      done({ identity, withDepth, rotationOnly, stale });
    }).catch((error) => done(String(error)));"""


def case_reprojection_depth(c, args):
    """The depth-guided warp on an analytic scene (a square in front of a wall), independent of the
    workers: drawn from the unmoved eye it is the frame; from an eye moved sideways (and turned), with
    the frame's depth it is much nearer the scene seen from there than rotation-only reprojection."""
    c.start_workers(count=1)
    c.start_master('--mode', 'raytrace')
    c.open_page()
    rows = []
    for name, move, yaw in (('moved 5 cm', [0.05, 0, 0], 0), ('moved 10 cm, turned 3 deg', [0.1, 0, 0.05], 3)):
        result = c.driver.execute_async_script(SYNTHETIC_REPROJECTION_JS, move, yaw)
        assert isinstance(result, dict), result
        rows.append((name, result))
        print(f'{name}: stale {result["stale"]:.2f} dB, rotation only {result["rotationOnly"]:.2f} dB, '
              f'with depth {result["withDepth"]:.2f} dB; unmoved eye vs frame: worst {result["identity"]} levels')
    for name, result in rows:
        assert result['identity'] <= 2, f'{name}: drawn from the unmoved eye, {result["identity"]} levels off the frame'
        assert result['withDepth'] >= result['rotationOnly'] + 4, f'{name}: depth does not help: {result}'


def case_reprojection_cost(c, args):
    """What reprojection costs the page a display frame (both eyes), at the tests' 2x160x120 and at a
    headset's 2x1024x1024, in this browser (headless Chromium: software GL, SwiftShader)."""
    c.start_workers()
    c.start_master('--mode', 'raytrace')
    c.open_page()
    renderer = c.js("""const gl = document.createElement('canvas').getContext('webgl');
        const info = gl.getExtension('WEBGL_debug_renderer_info');
        return info ? gl.getParameter(info.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER);""")
    print(f'renderer: {renderer}')
    print(f'{"ms a display frame":>20}  {"with depth":>10}  {"rotation only":>13}  {"pasted (off)":>12}')
    for width, height, count in ((160, 120, 100), (1024, 1024, 5)):
        row = []
        for variant in ('depth', 'rotation', 'paste'):
            ms = c.driver.execute_async_script(REPROJECTION_COST_JS, width, height, count, variant)
            assert isinstance(ms, (int, float)), ms
            row.append(ms)
        print(f'{f"2x{width}x{height}":>20}  {row[0]:10.2f}  {row[1]:13.2f}  {row[2]:12.2f}')


def tessera_render_eyes(c, pose, aa=1, size='160x120'):
    """tessera-render of the pose's two eyes (--eye-view), `aa` jittered samples a pixel; returns the PNG."""
    reference = c.dir / f'reference_aa{aa}.png'
    eyes = []
    for view in pose['views']:
        eyes += ['--eye-view', ','.join(repr(float(x)) for x in (*view['position'], *view['orientation'], *view['frustum']))]
    render = subprocess.run([str(c.build / 'worker/tessera-render'), str(c.dir / 'scenes' / 'cornell.tpk'), '--size', size,
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
    c.start_master('--mode', 'raytrace', '--max-samples', '2', '--jpeg-threads', '2',
                   size='160x300', tile=40)
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
    # Over it, the reprojected view: with the camera where the frame was rendered, the same picture.
    worst = c.js("""
        const frame = document.getElementById('frame-canvas'), shown = document.getElementById('reprojected-canvas');
        if (shown.hidden || shown.width !== frame.width || shown.height !== frame.height) return `reprojected ${shown.width}x${shown.height}`;
        const w = shown.width, h = shown.height, image = frame.getContext('2d').getImageData(0, 0, w, h).data;
        const gl = shown.getContext('webgl'), drawn = new Uint8Array(w * h * 4);
        gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, drawn);
        let worst = 0;
        for (let y = 0; y < h; ++y) for (let x = 0; x < w * 4; ++x)
          worst = Math.max(worst, Math.abs(drawn[(h - 1 - y) * w * 4 + x] - image[y * w * 4 + x]));
        return worst;""")
    assert isinstance(worst, int) and worst <= 2, f'the reprojected view of a still camera differs from the frame: {worst}'

    reports = [m for m in c.socket_log('sent') if m.get('type') == 'displayed']
    assert reports, 'the page reported no frame displayed'
    for report in reports:
        assert report['received'] <= report['decoded'] <= report['t'], report
    status = c.wait_for('a status with the page\'s stages',
                        lambda: next((m for m in reversed(c.socket_log('text')) if m.get('type') == 'status'
                                      and m.get('page_ms', {}).get('decode', 0) > 0), None), timeout=10)
    assert status['page_ms']['network'] >= 0 and status['page_ms']['draw'] >= 0, status
    c.wait_for('the dashboard showing them', lambda: 'decode' in c.js("return document.getElementById('master-status').textContent"))
    if 'page_mbit_s' in status:  # masters that count the pages' link
        c.wait_for('the page link rate on the dashboard', lambda: 'Mbit/s' in c.js("return document.getElementById('page-link').textContent"))


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


def pack_moving_cube(c):
    """One animated cube (and the small sphere it carries) around the origin, packed with its nodes as
    instances (deploy/make-animated-scene, tessera-pack --instances)."""
    gltf, tpk = c.dir / 'moving.gltf', c.dir / 'moving.tpk'
    subprocess.run([sys.executable, str(c.source / 'deploy/make-animated-scene'), '--output', str(gltf), '--count', '1',
                    '--instances', '0', '--center', '0,0,0', '--size', '1', '--spread', '4'],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([str(c.build / 'tessera-pack'), str(gltf), '--instances', '-o', str(tpk)],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    return tpk


def last_status(c):
    return next((m for m in reversed(c.socket_log('text')) if m.get('type') == 'status'), None)


def case_grab(c, args):
    """With "drag moves objects" on, a mouse drag from the middle of the view picks the object there (the
    master traces the ray on its copy of the scene) and moves it with the pointer: the master's status
    names the instance at its new place, the page shows it moved, and frames keep coming. A refused bad
    transform is one event."""
    from selenium.webdriver.common.action_chains import ActionChains
    tpk = pack_moving_cube(c)
    c.start_workers()
    c.start_master('--time-scale', '0', '--max-samples', '1', scene=tpk)  # one sample: the view changes only when the cube moves
    c.open_page()
    c.wait_for('the scene clock on the dashboard', lambda: not c.js("return document.getElementById('scene-clock').hidden"))
    wait_until_quiet(c)
    before = c.canvas_digest()
    c.js("document.getElementById('grab').click()")
    view = c.driver.find_element('id', 'frame-canvas')
    ActionChains(c.driver).move_to_element(view).click_and_hold().pause(0.5).move_by_offset(30, 0).pause(0.3) \
        .move_by_offset(30, 0).pause(0.5).release().perform()
    sent = c.socket_log('sent')
    pick = next((m for m in sent if m.get('type') == 'pick'), None)
    assert pick, f'the drag sent no pick\n{c.diagnostics()}'
    picked = c.wait_for('the master\'s answer to the pick',
                        lambda: next((m for m in c.socket_log('text') if m.get('type') == 'picked' and m['id'] == pick['id']), None))
    assert isinstance(picked['instance'], int), f'the ray through the middle of the view met nothing: {picked}'
    moves = c.wait_for('move messages', lambda: [m for m in c.socket_log('sent') if m.get('type') == 'move'])
    assert all(m['instance'] == picked['instance'] for m in moves), moves
    # The master holds what the page sent last (as floats).
    close = lambda a, b: all(abs(x - y) <= 1e-6 * max(1.0, abs(y)) for x, y in zip(a, b))
    status = c.wait_for('the last move in the master\'s status',
                        lambda: next((s['moved'] for s in [last_status(c) or {}]
                                      if s.get('moved') and close(s['moved'][0]['transform'], moves[-1]['transform'])), None))
    assert len(status) == 1 and status[0]['instance'] == picked['instance'], status
    start, now = picked['transform'], status[0]['transform']
    shift = [now[3] - start[3], now[7] - start[7], now[11] - start[11]]
    assert math.hypot(*shift) > 1e-3, f'the instance did not move: {start} -> {now}'
    c.wait_for('the moved cube on the page', lambda: c.canvas_digest() != before)
    # The grabbed point kept its distance from the eye: it moved across the view, not towards it.
    eye = pick['origin']
    before = [p - e for p, e in zip(picked['point'], eye)]
    after = [p + d - e for p, d, e in zip(picked['point'], shift, eye)]
    assert abs(math.hypot(*after) - math.hypot(*before)) < 1e-3 * math.hypot(*before), (before, after)
    # A flat transform from the page: one event, the session goes on.
    c.js("window.__socketLog.sockets[0].send(JSON.stringify({type: 'move', instance: arguments[0], "
         "transform: [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]}))", picked['instance'])
    events = lambda: [m['text'] for m in c.socket_log('text') if m.get('type') == 'event' and 'refused' in m['text']]
    c.wait_for('the refusal as an event', events)
    time.sleep(1)
    assert events() == [f'move refused: instance {picked["instance"]}: transform has scale 0 (the object would be flat)'], events()
    assert c.master.running(), 'the master exited'
    assert (last_status(c) or {}).get('moved', [{}])[0].get('transform') == now, 'a refused move changed the instance'
    c.js("document.getElementById('view').focus()")
    press(c, 'd', 0.3)
    wait_for_frame_of_pose(c, pose_messages(c)[-1]['id'])


def quat_looking(direction, roll_degrees=0.0):
    """The XR orientation ({x, y, z, w}) whose -z points along `direction` (level, then rolled)."""
    d = [v / math.hypot(*direction) for v in direction]
    yaw, pitch = math.atan2(-d[0], -d[2]), math.asin(max(-1.0, min(1.0, d[1])))
    q = quat_mul(quat_mul([math.cos(yaw / 2), 0, math.sin(yaw / 2), 0], [math.cos(pitch / 2), math.sin(pitch / 2), 0, 0]),
                 [math.cos(math.radians(roll_degrees) / 2), 0, 0, math.sin(math.radians(roll_degrees) / 2)])
    return {'w': q[0], 'x': q[1], 'y': q[2], 'z': q[3]}


def from_scene(c):
    """The inverse of scene_anchor: a scene point in the XR space the page starts a session with."""
    scene = last_session(c)['scene']
    camera = scene['camera']
    scale = scene.get('units_per_meter') or 1
    forward = quat_rotate(camera['orientation'], [0, 0, -1])
    yaw = math.atan2(-forward[0], -forward[2])
    back = [math.cos(yaw / 2), 0, -math.sin(yaw / 2), 0]
    return lambda point: [v / scale for v in quat_rotate(back, [p - q for p, q in zip(point, camera['position'])])]


def carried(transform, hand_from, hand_to):
    """`transform` (3x4 rows) carried rigidly by a hand moving between two scene poses (position, [w,x,y,z])."""
    (p0, q0), (p1, q1) = hand_from, hand_to
    turn = quat_mul(q1, [q0[0], -q0[1], -q0[2], -q0[3]])
    out = [0.0] * 12
    for column in range(3):
        axis = quat_rotate(turn, [transform[column], transform[4 + column], transform[8 + column]])
        for row in range(3):
            out[4 * row + column] = axis[row]
    origin = quat_rotate(turn, [transform[3] - p0[0], transform[7] - p0[1], transform[11] - p0[2]])
    for row in range(3):
        out[4 * row + 3] = origin[row] + p1[row]
    return out


def eye_pixel(view, point, eye_width, eye_height):
    """Where a scene point lands in an eye image ({position, orientation, frustum} as the pose sent it)."""
    q = view['orientation']
    v = quat_rotate([q[0], -q[1], -q[2], -q[3]], [p - e for p, e in zip(point, view['position'])])
    assert v[2] < 0, f'{point} is behind the eye'
    left, right, bottom, top = view['frustum']
    x, y = v[0] / -v[2], v[1] / -v[2]
    pixel = [round((x - left) / (right - left) * eye_width), round((top - y) / (top - bottom) * eye_height)]
    assert 0 <= pixel[0] < eye_width and 0 <= pixel[1] < eye_height, f'{point} lands outside the eye image, at {pixel}'
    return pixel


def last_frame_pixels(c, points):
    """The latest frame's RGB, averaged over 5x5 pixels, around each [x, y] of `points`."""
    return c.driver.execute_async_script("""
        const done = arguments[arguments.length - 1], points = arguments[0];
        const then = ({width, height, data}) => done(points.map(([px, py]) => {
          const sum = [0, 0, 0];
          let n = 0;
          for (let y = Math.max(0, py - 2); y <= Math.min(height - 1, py + 2); ++y)
            for (let x = Math.max(0, px - 2); x <= Math.min(width - 1, px + 2); ++x, ++n)
              for (let k = 0; k < 3; ++k) sum[k] += data[(y * width + x) * 4 + k];
          return sum.map((v) => v / n);
        }));""" + DECODE_LAST_FRAME_JS, points)


def case_xr_grab(c, args):
    """In the headset, a controller's squeeze picks the object its target ray points at and the object
    then moves as the hand holds it (turning with it, no jump at grab start); the master holds it at its
    new place and the next frames show it there (pixels where it was and where it is now); letting go
    leaves it there. A second hand squeezing (VR) does not drop it; a trigger (select) grabs too, and a
    controller that disconnects mid-grab lets go."""
    tpk = pack_moving_cube(c)
    c.start_workers()
    c.start_master('--time-scale', '0', '--max-samples', '1', scene=tpk)
    c.open_page([fake_xr_script(xr_config())])
    c.js("document.getElementById('grab').click()")
    first = enter_xr(c)
    # The head looks where the scene camera looks (the XR space's anchor keeps its heading only).
    camera = last_session(c)['scene']['camera']
    pitch = math.degrees(math.asin(quat_rotate(camera['orientation'], [0, 0, -1])[1]))
    c.js('window.__fakeXr.setPose(arguments[0])', xr_pose(0.0, BASE_VIEWER, pitch))
    pose = c.wait_for('the pose looking at the scene', lambda: next((p for p in pose_messages(c) if 'views' in p and p['id'] > first['id']), None))
    wait_for_frame_of_pose(c, pose['id'])
    wait_until_quiet(c)
    eye_w, eye_h = xr_config()['eyeWidth'], xr_config()['eyeHeight']
    to_scene, to_xr = scene_anchor(c), from_scene(c)
    fake = lambda call, *a: c.js(f'window.__fakeXr.{call}', *a)
    moves = lambda: [m for m in c.socket_log('sent') if m.get('type') == 'move']
    close = lambda a, b, tol=1e-4: all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b))

    # The right hand, 20 cm right of and below the eyes, points at the middle of the scene camera's view
    # (where the flat grab test finds the cube); the left hand points away.
    aim = to_xr([a + 10 * b for a, b in zip(camera['position'], quat_rotate(camera['orientation'], [0, 0, -1]))])
    hand0 = {'position': [0.2, -0.2, 0.0], 'orientation': quat_looking([a - b for a, b in zip(aim, [0.2, -0.2, 0.0])])}
    fake('setController(arguments[0], arguments[1])', 'right', {'targetRay': hand0})
    fake('setController(arguments[0], arguments[1])', 'left', {'targetRay': {'position': [-0.2, -0.2, 0], 'orientation': quat_looking([-1, 0, 0])}})
    xr_frames_pass(c)
    fake('press("right", "squeeze")')
    pick = c.wait_for('the squeeze\'s pick', lambda: next((m for m in c.socket_log('sent') if m.get('type') == 'pick'), None), timeout=10)
    picked = c.wait_for('the master\'s answer to the pick',
                        lambda: next((m for m in c.socket_log('text') if m.get('type') == 'picked' and m['id'] == pick['id']), None))
    assert isinstance(picked['instance'], int), f'the controller\'s ray met nothing: {pick} -> {picked}'
    scene_hand0 = to_scene(hand0['position'], hand0['orientation'])
    assert close(pick['origin'], scene_hand0[0], 1e-5), (pick['origin'], scene_hand0)
    first = c.wait_for('the first move', moves, timeout=10)[0]
    assert first['instance'] == picked['instance'] and close(first['transform'], picked['transform'], 1e-5), \
        f'the object jumped at grab start: {picked["transform"]} -> {first["transform"]}'
    # Where the cube is and where the hand below will carry it: 30 cm right, 10 cm up, turned 25 degrees left.
    turn = math.radians(25) / 2
    o = hand0['orientation']
    q1 = quat_mul([math.cos(turn), 0, math.sin(turn), 0], [o['w'], o['x'], o['y'], o['z']])
    hand1 = {'position': [0.5, -0.1, 0.0], 'orientation': {'w': q1[0], 'x': q1[1], 'y': q1[2], 'z': q1[3]}}
    expected = carried(picked['transform'], scene_hand0, to_scene(hand1['position'], hand1['orientation']))
    was, now = picked['transform'][3::4], expected[3::4]
    points = [eye_pixel(pose['views'][0], p, eye_w, eye_h) for p in (was, now)]
    assert abs(points[0][0] - points[1][0]) + abs(points[0][1] - points[1][1]) > 10, f'the cube would hardly move in the image: {points}'
    before = last_frame_pixels(c, points)

    # The other hand squeezes too (VR: nothing to scale): the right hand still holds the cube.
    fake('press("left", "squeeze")')
    xr_frames_pass(c, 5)
    assert c.js('return window.tessera.grab.held?.instance') == picked['instance'], 'a second hand\'s squeeze dropped the object'
    fake('release("left", "squeeze")')

    # The hand moves and turns: the cube goes with it.
    fake('setController(arguments[0], arguments[1])', 'right', {'targetRay': hand1})
    status = c.wait_for('the carried cube in the master\'s status', lambda: next(
        (s['moved'] for s in [last_status(c) or {}] if s.get('moved') and close(s['moved'][0]['transform'], expected)), None), timeout=20)
    assert len(status) == 1 and status[0]['instance'] == picked['instance'], status
    fake('release("right", "squeeze")')
    c.wait_for('the grab to end', lambda: not c.js('return window.tessera.grab.active'), timeout=10)
    sent = len(moves())
    # Let go: the hand moves on alone.
    fake('setController(arguments[0], arguments[1])', 'right', {'targetRay': hand0})
    xr_frames_pass(c, 10)
    assert len(moves()) == sent, f'moves after letting go: {moves()[sent:]}'
    wait_until_quiet(c)
    assert close(last_status(c)['moved'][0]['transform'], expected), 'the cube did not stay where it was let go'
    after = last_frame_pixels(c, points)
    if args.artifacts:
        last_frame_png(c, Path(args.artifacts) / 'xr_grab_after.png')
    differs = lambda a, b: sum(abs(x - y) for x, y in zip(a, b)) > 60
    assert differs(before[0], after[0]), f'where the cube was, the frame is as before: {before[0]} -> {after[0]}'
    assert differs(before[1], after[1]), f'where the cube is now, the frame is as before: {before[1]} -> {after[1]}'

    # The trigger grabs too; the controller disconnects mid-grab: the grab ends there.
    aim = to_xr(now)
    hand2 = {'position': [-0.2, -0.2, 0.0], 'orientation': quat_looking([a - b for a, b in zip(aim, [-0.2, -0.2, 0.0])])}
    fake('setController(arguments[0], arguments[1])', 'left', {'targetRay': hand2})
    xr_frames_pass(c)
    fake('press("left", "select")')
    held = c.wait_for('the trigger\'s grab', lambda: c.js('return window.tessera.grab.held'), timeout=20)
    hand3 = {'position': [-0.2, 0.0, 0.0], 'orientation': hand2['orientation']}
    fake('setController(arguments[0], arguments[1])', 'left', {'targetRay': hand3})
    lifted = carried(held['transform'], to_scene(hand2['position'], hand2['orientation']), to_scene(hand3['position'], hand3['orientation']))
    placed = lambda: next((m['transform'] for m in (last_status(c) or {}).get('moved', []) if m['instance'] == held['instance']), None)
    c.wait_for('the object lifted by the trigger\'s hand', lambda: placed() and close(placed(), lifted), timeout=20)
    fake('disconnect("left")')
    c.wait_for('the lost controller to let go', lambda: not c.js('return window.tessera.grab.active'), timeout=10)
    ended = [e['type'] for e in c.js('return window.__fakeXr.inputEvents') if e['handedness'] == 'left']
    assert ended[-2:] == ['selectstart', 'selectend'], f'a controller lost mid-grab: {ended}'
    sent = len(moves())
    xr_frames_pass(c, 10)
    assert len(moves()) == sent, f'moves after the controller went: {moves()[sent:]}'
    assert close(placed(), lifted), 'the object did not stay where the lost controller left it'
    assert c.master.running() and c.js('return window.tessera.xr.active'), 'the session did not go on'


def main():
    return run_case(__doc__, {name[5:]: case for name, case in globals().items() if name.startswith('case_')})


if __name__ == '__main__':
    sys.exit(main())
