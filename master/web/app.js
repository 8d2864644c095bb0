// Tessera live page: shows the master's frames as they arrive, drives the camera (fly camera or WebXR)
// when this page is the driver, and shows the cluster's dashboard.
import { TimeChart } from './charts.js';
import { Dashboard } from './dashboard.js';
import { FlyCamera } from './fly_camera.js';
import { LiveConnection, socketUrl } from './protocol.js';
import { XrDriver, offeredModes } from './xr.js';

const $ = (id) => document.getElementById(id);
const POSE_TIMES_KEPT = 1024;

const view = $('view');
const frameCanvas = $('frame-canvas');
const overlayCanvas = $('overlay-canvas');
const camera = new FlyCamera();
const poseTimes = new Map();       // pose id -> page time it was sampled (ms)
const drawTimes = [];              // page times of the frames drawn in the last second
const latencies = [];              // page-measured pose -> photon of the last minute: [t, ms]
let session = null;                // latest session message
let needPose = false;              // send the camera's pose on the next display frame even if unchanged
let newestDecoded = 0;             // frame number of the newest frame decoded (older ones are dropped)
let pending = null;                // decoded frame waiting for the next display frame: { header, bands: [{ y, bitmap }], ... }
let lastFrame = null;              // header and size of the frame on screen, for the overlay
let gaze = null;                   // cursor position over the image, [0,1]^2 of one eye
let lastMeasuredPose = 0;          // pose whose first frame gave the latest latency figure
let cameraScene = null;            // the scene the fly camera was placed in (kept across reconnects)

const latencyChart = new TimeChart($('latency-chart'),
  [{ name: 'page', color: '#4fc3f7' }, { name: 'master median', color: '#ffb74d' }], ' ms');
const fpsChart = new TimeChart($('fps-chart'),
  [{ name: 'page', color: '#81c784' }, { name: 'master', color: '#ffb74d' }], '');

const dashboard = new Dashboard((settings) => {
  if (connection.sendSettings(settings)) dashboard.addEvent(`settings: ${JSON.stringify(settings)}`, 'local');
});

const xr = new XrDriver({
  onPose: ({ position, orientation, views, gaze: xrGaze }) => sendPose(position, orientation, { views, gaze: xrGaze }),
  onEnd: () => {
    dashboard.addEvent('left immersive mode', 'local');
    needPose = true;
  },
});

const connection = new LiveConnection(socketUrl(window.location),
  matchMedia('(pointer: coarse)').matches ? 'phone' : 'desktop', {
    onOpen: () => {
      newestDecoded = 0;  // a restarted master counts frames from the start again
      setBadge('connection', 'connected', 'ok');
      dashboard.addEvent('connected', 'local');
    },
    onClose: (code, reason) => {
      setBadge('connection', `closed ${code}${reason ? ': ' + reason : ''}`, 'bad');
      dashboard.addEvent(`connection closed (${code}${reason ? ' ' + reason : ''}), reconnecting`, 'error');
      session = null;
    },
    onMessage: onMessage,
    onFrame: onFrame,
    onError: (error) => dashboard.addEvent(`bad message from the master: ${error.message}`, 'error'),
  });
if (new URLSearchParams(window.location.search).get('watch') !== null) connection.want = 'watch';

function setBadge(id, text, kind) {
  const badge = $(id);
  badge.textContent = text;
  badge.className = `badge ${kind}`;
}

function driving() {
  return session?.role === 'drive' && connection.connected;
}

function onMessage(message) {
  switch (message.type) {
    case 'session': onSession(message); break;
    case 'status':
      dashboard.showStatus(message);
      latencyChart.add(1, performance.now(), message.latency_ms?.median);
      fpsChart.add(1, performance.now(), message.fps);
      break;
    case 'event': dashboard.addEvent(message.text); break;
    default: break;  // newer masters may add messages; this page ignores them
  }
}

function onSession(message) {
  const roleChanged = session?.role !== message.role;
  session = message;
  if (cameraScene !== message.scene?.name) {
    cameraScene = message.scene?.name;
    camera.reset(message.scene);
    $('scene-name').textContent = cameraScene ?? '';
  }
  if (roleChanged) {
    setBadge('role', message.role === 'drive' ? 'driving' : 'watching', message.role === 'drive' ? 'ok' : 'warn');
    dashboard.addEvent(message.role === 'drive' ? 'this page drives' : 'this page watches', 'local');
    if (message.role === 'drive') {
      needPose = true;
      xr.lastKey = '';  // an immersive session resends its pose too
    }
  }
  $('take-control').hidden = message.role === 'drive';
  dashboard.showSession(message);
}

function sendPose(position, orientation, extra) {
  if (!driving()) return;
  const t = performance.now();
  const body = { ...extra };
  if (!body.gaze) delete body.gaze;
  const id = connection.sendPose(t, position, orientation, body);
  if (id === 0) return;
  poseTimes.set(id, t);
  if (poseTimes.size > POSE_TIMES_KEPT) poseTimes.delete(poseTimes.keys().next().value);
  $('hud-pose').textContent = String(id);
}

// A frame's bands decode in parallel (one createImageBitmap each) and are drawn at their rows.
async function onFrame(header, bands, received) {
  let bitmaps;
  try {
    bitmaps = await Promise.all(bands.map((band) => createImageBitmap(band.jpeg)));
  } catch (error) {
    dashboard.addEvent(`frame ${header.frame}: undecodable image (${error.message})`, 'error');
    return;
  }
  const decoded = performance.now();
  const frame = { header, received, decoded, width: bitmaps[0].width, height: header.height,
    bands: bands.map((band, i) => ({ y: band.y, bitmap: bitmaps[i] })) };
  if (header.frame < newestDecoded) {  // a later frame decoded first
    closeBands(frame);
    return;
  }
  newestDecoded = header.frame;
  // Watchers follow the driver's camera when the master names the pose, so taking control is seamless.
  if (!driving() && Array.isArray(header.position) && Array.isArray(header.orientation)) {
    camera.position = [...header.position];
    camera.orientation = [...header.orientation];
  }
  if (xr.active) {
    // The layer's frame is the one that counts as displayed; the page's canvas mirrors it.
    const mirror = await Promise.all(frame.bands.map(async (band) => ({ y: band.y, bitmap: await createImageBitmap(band.bitmap) })));
    xr.showFrame(frame, header.eyes || 1, (t) => frameShown(frame, t));
    replacePending({ ...frame, bands: mirror, mirror: true });
    return;
  }
  replacePending(frame);
}

function closeBands(frame) {
  for (const band of frame.bands) band.bitmap.close();
}

function replacePending(frame) {
  if (pending) closeBands(pending);
  pending = frame;
}

function drawPending() {
  if (!pending) return;
  const frame = pending;
  pending = null;
  if (frameCanvas.width !== frame.width || frameCanvas.height !== frame.height) {
    frameCanvas.width = frame.width;
    frameCanvas.height = frame.height;
  }
  const context = frameCanvas.getContext('2d');
  for (const band of frame.bands) context.drawImage(band.bitmap, 0, band.y);
  closeBands(frame);
  if (!frame.mirror) frameShown(frame, performance.now());
}

// Bookkeeping once a frame is on screen: `displayed` to the master, the HUD, charts and overlay.
function frameShown({ header, width, height, received, decoded }, t) {
  const sentAt = poseTimes.get(header.pose_id);
  if (driving()) connection.sendDisplayed(header.frame, header.pose_id, t, received, decoded);
  drawTimes.push(t);
  while (drawTimes.length && drawTimes[0] < t - 1000) drawTimes.shift();
  const fps = drawTimes.length;
  fpsChart.add(0, t, fps);
  $('hud-frame').textContent = String(header.frame);
  $('hud-fps').textContent = String(fps);
  const max = session?.max_samples;
  $('hud-samples').textContent = max ? `${header.samples} / ${max}` : String(header.samples);
  $('hud-image').textContent = `${header.width}x${header.height}${header.eyes === 2 ? ' x2 eyes' : ''}`;
  // Pose -> photon is measured on the first frame of each pose; refinements of a held pose come later
  // by design and would only measure how long the camera held still.
  if (sentAt !== undefined && header.pose_id !== lastMeasuredPose) {
    lastMeasuredPose = header.pose_id;
    const latency = t - sentAt;
    latencies.push([t, latency]);
    while (latencies[0][0] < t - 60000) latencies.shift();
    const sorted = latencies.map(([, ms]) => ms).sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)];
    $('hud-latency').textContent = `${latency.toFixed(0)} ms, median ${median.toFixed(0)}`;
    latencyChart.add(0, t, latency);
  }
  showStages(header.stages);
  lastFrame = { header, width, height };
  if ($('show-overlay').checked) dashboard.drawOverlay(overlayCanvas, header, width, height);
}

const STAGE_NAMES = { pose_wait: 'pose wait', render: 'render', wire: 'wire', composite: 'composite',
  accumulate: 'accumulate', encode: 'encode' };

function showStages(stages) {
  if (!stages) return;
  const parts = Object.entries(STAGE_NAMES)
    .filter(([key]) => Number.isFinite(stages[key]))
    .map(([key, name]) => `${name} ${stages[key].toFixed(1)}`);
  $('stages').textContent = parts.length ? `master, ms: ${parts.join(' · ')}` : '';
}

// ---- input: keys, mouse, touch, on-screen pad ----

function typingInForm(event) {
  return event.target instanceof HTMLInputElement || event.target instanceof HTMLSelectElement;
}

window.addEventListener('keydown', (event) => {
  if (typingInForm(event) || event.ctrlKey || event.metaKey || event.altKey) return;
  if (camera.keyDown(event.code, event.shiftKey)) event.preventDefault();
});
window.addEventListener('keyup', (event) => camera.keyUp(event.code, event.shiftKey));
window.addEventListener('blur', () => camera.releaseAll());

const pointers = new Map();  // pointer id -> last position, for drags on the view
let moveStart = null;        // two-finger drag: the centroid where it began

function centroid() {
  let x = 0, y = 0;
  for (const p of pointers.values()) {
    x += p.x;
    y += p.y;
  }
  return { x: x / pointers.size, y: y / pointers.size };
}

view.addEventListener('pointerdown', (event) => {
  if (event.target.closest('#move-pad')) return;
  view.focus();
  view.setPointerCapture(event.pointerId);
  pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
  moveStart = pointers.size === 2 ? centroid() : null;
});

view.addEventListener('pointermove', (event) => {
  updateGaze(event);
  const last = pointers.get(event.pointerId);
  if (!last) return;
  const dx = event.clientX - last.x;
  const dy = event.clientY - last.y;
  pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
  if (pointers.size === 1) {
    camera.look(dx, dy, frameCanvas.clientHeight);
  } else if (pointers.size === 2 && moveStart) {
    // Two fingers act as a joystick: the further from where they began, the faster (60 px = full).
    const c = centroid();
    const clamp = (v) => Math.max(-1, Math.min(1, v / 60));
    camera.padMove = [clamp(c.x - moveStart.x), 0, clamp(c.y - moveStart.y)];
  }
});

function endPointer(event) {
  if (!pointers.delete(event.pointerId)) return;
  if (pointers.size < 2) {
    moveStart = null;
    camera.padMove = [0, 0, 0];
  }
}
view.addEventListener('pointerup', endPointer);
view.addEventListener('pointercancel', endPointer);
view.addEventListener('pointerleave', () => { gaze = null; });

function updateGaze(event) {
  const rect = frameCanvas.getBoundingClientRect();
  if (rect.width === 0 || rect.height === 0) return;
  const eyes = lastFrame?.header.eyes || 1;
  const u = ((event.clientX - rect.left) / rect.width) * eyes;
  const v = (event.clientY - rect.top) / rect.height;
  gaze = u >= 0 && u <= eyes && v >= 0 && v <= 1 ? [u - Math.min(Math.floor(u), eyes - 1), v] : null;
}

for (const button of document.querySelectorAll('#move-pad button')) {
  const direction = button.dataset.move.split(',').map(Number);
  let held = false;
  const press = (down) => (event) => {
    event.preventDefault();
    if (held === down) return;
    held = down;
    const sign = down ? 1 : -1;
    camera.padMove = camera.padMove.map((v, i) => v + sign * direction[i]);
  };
  button.addEventListener('pointerdown', press(true));
  for (const name of ['pointerup', 'pointerleave', 'pointercancel']) button.addEventListener(name, press(false));
}

$('show-overlay').addEventListener('change', (event) => {
  overlayCanvas.hidden = !event.target.checked;
  if (event.target.checked && lastFrame) {
    dashboard.drawOverlay(overlayCanvas, lastFrame.header, lastFrame.width, lastFrame.height);
  } else {
    dashboard.hideLegend();
  }
});

$('take-control').addEventListener('click', () => connection.takeControl());

// ---- WebXR ----

async function enterXr(mode) {
  try {
    await xr.start(mode, { position: camera.position, orientation: camera.orientation },
      session?.scene?.units_per_meter > 0 ? session.scene.units_per_meter : 1);
    dashboard.addEvent(`entered ${mode}`, 'local');
  } catch (error) {
    dashboard.addEvent(`${mode}: ${error.message}`, 'error');
  }
}

offeredModes().then(({ vr, ar }) => {
  $('enter-vr').hidden = !vr;
  $('enter-ar').hidden = !ar;
});
$('enter-vr').addEventListener('click', () => enterXr('immersive-vr'));
$('enter-ar').addEventListener('click', () => enterXr('immersive-ar'));

// ---- the display loop: draw the newest frame, send the pose when it changed ----

let lastLoop = performance.now();
let lastChart = 0;
function displayFrame(now) {
  const dt = (now - lastLoop) / 1000;
  lastLoop = now;
  drawPending();
  if (!xr.active && driving()) {
    const moved = camera.update(dt);
    if (moved || needPose) {
      needPose = false;
      sendPose(camera.position, camera.orientation, { gaze });
    }
  } else {
    camera.lookDelta = [0, 0];  // a watcher's drags do not pile up for when it takes control
  }
  if (now - lastChart > 250) {
    lastChart = now;
    // frames drawn in the last second, also while none come (a still view, a stalled worker)
    while (drawTimes.length && drawTimes[0] < now - 1000) drawTimes.shift();
    $('hud-fps').textContent = String(drawTimes.length);
    latencyChart.draw(now);
    fpsChart.draw(now);
  }
  requestAnimationFrame(displayFrame);
}

connection.open();
requestAnimationFrame(displayFrame);
