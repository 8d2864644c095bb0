// Tessera live page: shows the master's frames as they arrive, drives the camera (fly camera or WebXR)
// when this page is the driver, and shows the cluster's dashboard.
import { TimeChart } from './charts.js';
import { Dashboard } from './dashboard.js';
import { FlyCamera } from './fly_camera.js';
import { Grab, cameraRay } from './grab.js';
import { LiveConnection, inflate, socketUrl } from './protocol.js';
import { Reprojector, carryEye, withoutGuardBand } from './reproject.js';
import { ClockControl } from './scene_clock.js';
import { StreamStats } from './stream_stats.js';
import { VideoStream, decodableCodecs } from './video_stream.js';
import { XrDriver, offeredModes } from './xr.js';

const $ = (id) => document.getElementById(id);
const POSE_TIMES_KEPT = 1024;
const STALLED_MS = 500;            // a pose without its frame for longer than this: the cluster stalls
const params = new URLSearchParams(window.location.search);

const view = $('view');
const frameCanvas = $('frame-canvas');
const overlayCanvas = $('overlay-canvas');
const reprojectedCanvas = $('reprojected-canvas');
const camera = new FlyCamera();
const poseTimes = new Map();       // pose id -> page time it was sampled (ms)
const drawTimes = [];              // page times of the frames drawn in the last second
const latencies = [];              // page-measured pose -> photon of the last minute: [t, ms]
let session = null;                // latest session message
let needPose = false;              // send the camera's pose on the next display frame even if unchanged
let newestDecoded = 0;             // frame number of the newest frame decoded (older ones are dropped)
let pending = null;                // decoded frame waiting for the next display frame: { header, bands: [{ y, bitmap }], video, ... }
let lastFrame = null;              // header and size of the frame on screen, for the overlay
let gaze = null;                   // cursor position over the image, [0,1]^2 of one eye
let lastMeasuredPose = 0;          // pose whose first frame gave the latest latency figure
let cameraScene = null;            // the scene the fly camera was placed in (kept across reconnects)
let flatFrame = null;              // the frame the flat view reprojects: { header, views, viewer, eyes, width, height }
let flatDrawn = '';                // what the flat view shows now (frame, camera, reprojection): drawn again only when it changes
let lastPoseSent = { id: 0, t: 0 };
let newestFramePose = 0;           // pose id of the newest frame received
let arBackground = false;          // this page asked for a transparent background for AR
let backgroundAfterReconnect = false;
const reprojectBox = $('reproject');
reprojectBox.checked = params.get('reproject') !== '0';
const flatReprojector = makeFlatReprojector();
const streamStats = new StreamStats();

const latencyChart = new TimeChart($('latency-chart'),
  [{ name: 'page', color: '#4fc3f7' }, { name: 'master median', color: '#ffb74d' }], ' ms');
const fpsChart = new TimeChart($('fps-chart'),
  [{ name: 'page', color: '#81c784' }, { name: 'master', color: '#ffb74d' }], '');

const dashboard = new Dashboard((settings) => {
  if (connection.sendSettings(settings)) dashboard.addEvent(`settings: ${JSON.stringify(settings)}`, 'local');
});

// Things that move: the scene clock and grabbing objects (the driving page's; a watcher only sees them).
const clockControl = new ClockControl((message) => driving() && connection.send(message));
$('grab').checked = params.get('grab') === '1';
const grab = new Grab((message) => driving() && connection.send(message), (text) => dashboard.addEvent(text, 'local'));

const xr = new XrDriver({
  onPose: ({ position, orientation, views, gaze: xrGaze }) => {
    const id = sendPose(position, orientation, { views, gaze: xrGaze });
    if (id) xr.posed(id, views);
  },
  onEyeSize: (size) => {
    // The layer's own per-eye resolution (times the quality factor): the images need no scaling.
    const current = session?.size;
    if (current && current[0] === size[0] && current[1] === size[1]) return;
    if (connection.sendSettings({ size })) dashboard.addEvent(`eye images ${size[0]}x${size[1]} for the headset`, 'local');
  },
  onPlace: (floor) => {
    if (connection.sendPlace(floor)) dashboard.addEvent(`placed the scene's floor (${floor.map((v) => v.toFixed(2)).join(', ')}) on a real surface`, 'local');
  },
  onLight: (direction, irradiance) => connection.sendLight(direction, irradiance),
  panelLines: (t) => panelLines(t),
  grab: () => (driving() && $('grab').checked ? grab : null),
  onScale: (factor) => {
    $('ar-scale').value = String(factor);
    $('ar-scale-value').textContent = `${factor.toFixed(2)}x`;
  },
  onEnd: () => {
    dashboard.addEvent('left immersive mode', 'local');
    if (arBackground) {
      arBackground = false;
      connection.sendSettings({ background: 'opaque' });
      connection.sendLight();
    }
    $('latency-label').textContent = 'pose → photon';
    $('ar-controls').hidden = true;
    reprojectedCanvas.hidden = !flatReprojector;
    needPose = true;
  },
});
xr.reproject = reprojectBox.checked;

const connection = new LiveConnection(socketUrl(window.location),
  matchMedia('(pointer: coarse)').matches ? 'phone' : 'desktop', {
    onOpen: () => {
      newestDecoded = 0;  // a restarted master counts frames from the start again
      videoStream.discard();  // a new connection's stream starts at a key frame
      setBadge('connection', 'connected', 'ok');
      dashboard.showQrCode(params.get('token') || '');
      if (xr.active) connection.takeControl();  // back after a drop: the headset drives again
      backgroundAfterReconnect = arBackground;
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
if (params.get('watch') !== null) connection.want = 'watch';
connection.wantsDepth = reprojectBox.checked;  // the depth makes reprojection right for near things too

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
      lastStatus = message;
      dashboard.showStatus(message);
      clockControl.show(message.clock);
      latencyChart.add(1, performance.now(), message.latency_ms?.median);
      fpsChart.add(1, performance.now(), message.fps);
      break;
    case 'event':
      dashboard.addEvent(message.text);
      recentEvents.unshift(message.text);
      recentEvents.length = Math.min(recentEvents.length, 2);
      break;
    case 'clock': clockControl.show(message); break;
    case 'picked': grab.picked(message); break;
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
      xr.resend();  // an immersive session resends its pose too
    }
  }
  $('take-control').hidden = message.role === 'drive';
  xr.floorPoint = floorPoint(message);
  // Back after a drop (the master may have restarted): an AR page asks for its see-through background
  // again, once (a master that refuses it says so with an event).
  if (backgroundAfterReconnect && message.role === 'drive') {
    backgroundAfterReconnect = false;
    if (arBackground && message.background !== 'transparent') connection.sendSettings({ background: 'transparent' });
  }
  dashboard.showSession(message);
  clockControl.show(message.clock);
}

// The scene point that AR tap-to-place stands on the real surface: the middle of the scene's floor
// (the shadow catcher's height when the scene has one, else the bottom of its bounds).
function floorPoint(message) {
  const bounds = message.scene?.bounds;
  if (!bounds) return null;
  const y = Number.isFinite(message.shadow_catcher) ? message.shadow_catcher : bounds[0][1];
  return [(bounds[0][0] + bounds[1][0]) / 2, y, (bounds[0][2] + bounds[1][2]) / 2];
}

// Returns the pose's id, 0 when it was not sent.
function sendPose(position, orientation, extra) {
  if (!driving()) return 0;
  const t = performance.now();
  const body = { ...extra };
  if (!body.gaze) delete body.gaze;
  const id = connection.sendPose(t, position, orientation, body);
  if (id === 0) return 0;
  poseTimes.set(id, t);
  if (poseTimes.size > POSE_TIMES_KEPT) poseTimes.delete(poseTimes.keys().next().value);
  lastPoseSent = { id, t };
  $('hud-pose').textContent = String(id);
  return id;
}

// A frame's bands decode in parallel (one createImageBitmap each) and are drawn at their rows; its depth
// and alpha sections inflate beside them. A video frame goes to the decoder instead.
async function onFrame(header, bands, received, sections) {
  newestFramePose = Math.max(newestFramePose, header.pose_id);
  streamStats.received(received, sections.messageBytes, header);
  if (sections.video) {
    onVideoFrame(header, received, sections);
    return;
  }
  let bitmaps, depth, alpha;
  try {
    [bitmaps, depth, alpha] = await Promise.all([Promise.all(bands.map((band) => createImageBitmap(band.jpeg))),
      sections.depth ? inflate(sections.depth) : null, sections.alpha ? inflate(sections.alpha) : null]);
  } catch (error) {
    dashboard.addEvent(`frame ${header.frame}: undecodable image (${error.message})`, 'error');
    return;
  }
  const decoded = performance.now();
  streamStats.decoded(decoded - received);
  showDecoded({ header, received, decoded, width: bitmaps[0].width, height: header.height, depth, alpha,
    bands: bands.map((band, i) => ({ y: band.y, bitmap: bitmaps[i] })), video: null });
}

// Video: every frame goes to the decoder in order (a delta frame needs the ones before it); the depth and
// alpha sections inflate meanwhile. Pictures come back through onPicture below.
function onVideoFrame(header, received, sections) {
  const inflated = Promise.all([sections.depth ? inflate(sections.depth) : null, sections.alpha ? inflate(sections.alpha) : null]);
  inflated.catch(() => {});  // reported when its picture comes; a dropped frame's failure does not matter
  videoStream.push(header.video, sections.video, { header, received, inflated });
}

const videoStream = new VideoStream({
  onPicture: async (picture, { header, received, inflated }, decodeMs, yuv) => {
    let depth, alpha;
    try {
      [depth, alpha] = await inflated;
    } catch (error) {
      picture.close();
      dashboard.addEvent(`frame ${header.frame}: undecodable depth or alpha (${error.message})`, 'error');
      return;
    }
    if (yuv) videoStream.counts.planes += 1;
    const decoded = performance.now();
    streamStats.decoded(decoded - received);
    // The picture is the coded size (smaller while the master lowers the resolution): drawn stretched
    // over the whole image.
    showDecoded({ header, received, decoded, width: (header.eyes || 1) * header.width, height: header.height, depth, alpha,
      bands: [], video: picture, yuv });
  },
  onKeyframeNeeded: (reason) => {
    if (connection.sendKeyframeRequest(reason)) dashboard.addEvent(`asked the master for a key frame: ${reason}`, 'local');
  },
});

// A decoded frame (JPEG bands or a video picture): the newest waits for the next display frame.
async function showDecoded(frame) {
  const header = frame.header;
  if (header.frame < newestDecoded) {  // a later frame decoded first
    closePicture(frame);
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
    const mirrorVideo = frame.video ? frame.video.clone() : null;
    xr.showFrame(frame, (t) => frameShown(frame, t));
    replacePending({ ...frame, bands: mirror, video: mirrorVideo, mirror: true });
    return;
  }
  replacePending(frame);
}

// Frees what a decoded frame holds (bitmaps, the decoder's picture) once drawn or passed over.
function closePicture(frame) {
  for (const band of frame.bands) band.bitmap.close();
  frame.video?.close();
}

function replacePending(frame) {
  if (pending) closePicture(pending);
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
  const start = performance.now();
  const context = frameCanvas.getContext('2d');
  // The flat view's WebGL canvas covers the frame canvas: a picture whose planes go to its textures is
  // not drawn below it as well (a software canvas converts the whole picture to RGB to draw it).
  const covered = frame.yuv && !frame.mirror && flatReprojector && !reprojectedCanvas.hidden;
  if (frame.video && !covered) context.drawImage(frame.video, 0, 0, frame.width, frame.height);
  for (const band of frame.bands) context.drawImage(band.bitmap, 0, band.y);
  uploadFlat(frame);
  closePicture(frame);
  const end = performance.now();
  streamStats.drawn(end - start);
  if (!frame.mirror) frameShown(frame, end);
}

// ---- the flat view's reprojection: a WebGL canvas over the frame canvas shows the newest frame as the
// fly camera sees it now ----

function makeFlatReprojector() {
  const gl = reprojectedCanvas.getContext('webgl', { alpha: false, preserveDrawingBuffer: true, antialias: false });
  if (!gl) {
    reprojectedCanvas.hidden = true;  // the frame canvas below shows the frames as they come
    return null;
  }
  return new Reprojector(gl);
}

// The eyes a frame was rendered from: the header's `views` where the master names them, else the eye
// the page asked for (the driver's pose, the scene camera's vertical field of view).
function sourceViews(header, width) {
  if (Array.isArray(header.views) && header.views.length) return header.views;
  const position = header.position ?? camera.position;
  const orientation = header.orientation ?? camera.orientation;
  const top = Math.tan(camera.fovRadians / 2);
  const right = (top * width) / header.height;
  return Array.from({ length: header.eyes || 1 }, () => ({ position, orientation, frustum: [-right, right, -top, top] }));
}

function uploadFlat(frame) {
  if (!flatReprojector) return;
  const header = frame.header;
  const eyes = header.eyes || 1;
  const width = header.width || frame.width / eyes;
  const views = sourceViews(header, width);
  flatReprojector.upload({ eyes, width, height: frame.height, bands: frame.bands, video: frame.video, yuv: frame.yuv, views,
    depth: frame.depth, near: header.depth?.near, depthPlane: header.depth, alpha: null });
  const viewer = { position: header.position ?? [...camera.position], orientation: header.orientation ?? [...camera.orientation] };
  // The eyes as the page asked for them: the guard band is there for reprojection, not for showing.
  const shown = views.map((view) => withoutGuardBand(view.frustum, header.guard_band));
  const shownWidth = Math.round(width * (shown[0][1] - shown[0][0]) / (views[0].frustum[1] - views[0].frustum[0]));
  const shownHeight = Math.round(frame.height * (shown[0][3] - shown[0][2]) / (views[0].frustum[3] - views[0].frustum[2]));
  const uploads = (flatFrame?.uploads ?? 0) + 1;  // a count, so the flat view knows a new upload from the last
  flatFrame = { header, views, viewer, shown, eyes, width: shownWidth, height: shownHeight, uploads };
}

function drawFlat() {
  if (!flatReprojector || !flatFrame || xr.active || reprojectedCanvas.hidden) return;
  const { views, viewer, shown, eyes, width, height } = flatFrame;
  // A still camera and no new frame: the canvas (preserveDrawingBuffer) already shows it; a software GL
  // would spend the page's time on the same pixels again.
  const drawing = JSON.stringify([flatFrame.uploads, camera.position, camera.orientation, reprojectBox.checked]);
  if (drawing === flatDrawn && reprojectedCanvas.width === eyes * width && reprojectedCanvas.height === height) return;
  flatDrawn = drawing;
  if (reprojectedCanvas.width !== eyes * width || reprojectedCanvas.height !== height) {
    reprojectedCanvas.width = eyes * width;
    reprojectedCanvas.height = height;
  }
  const now = { position: camera.position, orientation: camera.orientation };
  for (let eye = 0; eye < eyes; ++eye) {
    const current = { ...carryEye(views[eye], viewer, now), frustum: shown[eye] };
    flatReprojector.drawEye(eye, current, [eye * width, 0, width, height], { reproject: reprojectBox.checked });
  }
}

// Unchecked, both views show the frame as it was rendered (for comparison), the guard band cut off.
reprojectBox.addEventListener('change', () => { xr.reproject = reprojectBox.checked; });
reprojectedCanvas.hidden = !flatReprojector;

// Bookkeeping once a frame is on screen: `displayed` to the master, the HUD, charts and overlay.
function frameShown({ header, width, height, received, decoded }, t) {
  const sentAt = poseTimes.get(header.pose_id);
  // A video stream's every frame is also the master's rate control's acknowledgement, a watcher's too.
  if (driving() || header.video) connection.sendDisplayed(header.frame, header.pose_id, t, received, decoded);
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

// The stream's codec and rate on the HUD (and in the headset's panel), the details on the dashboard.
function showStream(now) {
  const summary = streamStats.summary(now);
  $('hud-stream').textContent = summary.codec === '-' ? '-' : `${summary.codec} ${summary.mbitPerS.toFixed(1)} Mbit/s`;
  dashboard.showStream(summary, videoStream.counts.keyRequests);
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
  if (pointers.size === 1 && $('grab').checked && driving()) {
    const ray = pointerRay(event);
    if (ray) grab.begin(ray);
  } else if (grab.active) {
    grab.end();  // a second finger: back to moving the camera
  }
});

// The ray from the fly camera through the pointer's pixel of the view (the first eye's, in stereo).
function pointerRay(event) {
  const rect = frameCanvas.getBoundingClientRect();
  const eyes = lastFrame?.header.eyes || 1;
  if (rect.width === 0 || rect.height === 0 || !session?.size) return null;
  const u = Math.min(((event.clientX - rect.left) / rect.width) * eyes, 1);
  const v = (event.clientY - rect.top) / rect.height;
  return cameraRay(camera.position, camera.orientation, camera.fovRadians, session.size[0] / session.size[1], u, v);
}

view.addEventListener('pointermove', (event) => {
  updateGaze(event);
  const last = pointers.get(event.pointerId);
  if (!last) return;
  const dx = event.clientX - last.x;
  const dy = event.clientY - last.y;
  pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
  if (grab.active) {
    const ray = pointerRay(event);
    if (ray) grab.move(ray);
  } else if (pointers.size === 1) {
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
  if (grab.active) grab.end();
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
  } catch (error) {
    dashboard.addEvent(`${mode}: ${error.message}`, 'error');
    return;
  }
  dashboard.addEvent(`entered ${mode}${mode === 'immersive-ar' ? ` (${xr.blendMode})` : ''}`, 'local');
  connection.takeControl();  // the headset drives
  reprojectedCanvas.hidden = true;
  $('latency-label').textContent = 'pose → predicted display';
  if (mode === 'immersive-ar') {
    $('ar-controls').hidden = false;
    // See-through displays show the real world where the scene has nothing; an opaque one shows it as VR.
    if (xr.blendMode !== 'opaque') {
      arBackground = true;
      connection.sendSettings({ background: 'transparent' });
    }
  }
}

$('quality').addEventListener('change', (event) => {
  const quality = Number(event.target.value);
  if (quality > 0) xr.setQuality(quality);
});
$('ar-scale').addEventListener('input', (event) => xr.setScale(Number(event.target.value)));
$('xr-panel').addEventListener('change', (event) => { xr.showPanel = event.target.checked; });

// What the headset's panel says: the connection, latency, rates and warnings.
let lastStatus = null;
const recentEvents = [];
function panelLines(now) {
  const lines = [];
  if (!connection.connected) {
    lines.push({ text: 'master gone: reconnecting', kind: 'bad' });
  } else {
    lines.push({ text: `connected, ${session?.role === 'drive' ? 'driving' : 'watching'}`, kind: 'ok' });
  }
  lines.push({ text: `pose → predicted display ${$('hud-latency').textContent}`, kind: 'ok' });
  lines.push({ text: `cluster ${Number.isFinite(lastStatus?.fps) ? lastStatus.fps.toFixed(1) : '-'} fps, shown ${$('hud-fps').textContent} fps, ` +
    `stream ${$('hud-stream').textContent}`, kind: 'ok' });
  if (connection.connected && lastPoseSent.id > newestFramePose && now - lastPoseSent.t > STALLED_MS) {
    lines.push({ text: `frames stalled ${((now - lastPoseSent.t) / 1000).toFixed(1)} s`, kind: 'warn' });
  }
  for (const text of recentEvents) lines.push({ text, kind: 'warn' });
  return lines;
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
  grab.flush();
  if (!xr.active && driving()) {
    const moved = camera.update(dt);
    if (moved || needPose) {
      needPose = false;
      sendPose(camera.position, camera.orientation, { gaze });
    }
  } else {
    camera.lookDelta = [0, 0];  // a watcher's drags do not pile up for when it takes control
  }
  drawFlat();
  if (now - lastChart > 250) {
    lastChart = now;
    // frames drawn in the last second, also while none come (a still view, a stalled worker)
    while (drawTimes.length && drawTimes[0] < now - 1000) drawTimes.shift();
    $('hud-fps').textContent = String(drawTimes.length);
    latencyChart.draw(now);
    fpsChart.draw(now);
    showStream(now);
  }
  requestAnimationFrame(displayFrame);
}

// For the console and the browser tests: the parts that draw.
window.tessera = { xr, flatReprojector, camera, videoStream, streamStats, grab, clockControl };

// `?codec=jpeg` asks for JPEG frames, `?codec=h264` (vp9, av1) offers only that codec; the master picks
// among the codecs offered (PROTOCOL.md "Video streams").
decodableCodecs(params.get('codec')).then((codecs) => {
  connection.decoders = codecs;
  connection.open();
});
requestAnimationFrame(displayFrame);
