// WebXR driving: an immersive session (VR or AR) whose every frame yields the viewer pose and each eye's
// view (pose and off-axis frustum) in scene space. Poses go to the master only when the head moved more
// than tracking noise (a dead band); every display frame draws the newest eye images reprojected to
// that frame's eyes (reproject.js), so the picture follows the head at display rate whatever the
// cluster's frame rate. In AR the layer is transparent where the scene has nothing, a tap on a real
// surface places the scene's floor there, and the real light's estimate drives the scene's sun.
import { add, angleBetween, conjugate, multiply, rotate, scale, subtract, yawOnly } from './quaternion.js';
import { poseRay } from './grab.js';
import { Reprojector } from './reproject.js';
import { XrPanel } from './xr_panel.js';

// The dead band: a pose closer than this to the last one sent is not sent (tracking noise); the
// reprojection covers it. After RESEND_MS a pose that differs at all is sent anyway.
const DEAD_BAND_RADIANS = (0.1 * Math.PI) / 180;
const DEAD_BAND_METRES = 0.001;
const RESEND_MS = 1000;
// Light estimates: sent when the direction turns more than this or the irradiance changes by more than
// this fraction, at most every LIGHT_INTERVAL_MS.
const LIGHT_TURN_RADIANS = (5 * Math.PI) / 180;
const LIGHT_CHANGE = 0.15;
const LIGHT_INTERVAL_MS = 500;

// Off-axis frustum [left, right, bottom, top] as tangents at unit distance from a column-major
// perspective projection matrix (XRView.projectionMatrix).
export function frustumFromProjection(m) {
  return [(m[8] - 1) / m[0], (m[8] + 1) / m[0], (m[9] - 1) / m[5], (m[9] + 1) / m[5]];
}

// Where a view-space direction lands in an eye image, in [0,1] image coordinates (y down), or null when
// it points behind the eye.
export function imagePoint(direction, frustum) {
  if (direction[2] >= 0) return null;
  const [left, right, bottom, top] = frustum;
  const x = direction[0] / -direction[2];
  const y = direction[1] / -direction[2];
  return [(x - left) / (right - left), (top - y) / (top - bottom)];
}

function quaternionOf(transform) {
  const o = transform.orientation;
  return [o.w, o.x, o.y, o.z];
}

function positionOf(transform) {
  const p = transform.position;
  return [p.x, p.y, p.z];
}

function poseOf(transform) {
  return { position: positionOf(transform), orientation: quaternionOf(transform) };
}

// The immersive modes this browser offers: { vr: bool, ar: bool }.
export async function offeredModes() {
  const xr = navigator.xr;
  if (!xr) return { vr: false, ar: false };
  const supported = async (mode) => {
    try {
      return await xr.isSessionSupported(mode);
    } catch {
      return false;
    }
  };
  return { vr: await supported('immersive-vr'), ar: await supported('immersive-ar') };
}

// One immersive session. The XR reference space's origin is placed at `anchor` (the fly camera's
// position, turned by its heading only so the horizon stays level), metres scaled by `unitsPerMeter`.
// Callbacks:
//   onPose({ position, orientation, views, gaze }): the head moved past the dead band (or `resend()`);
//   onEyeSize([w, h]): the image size each eye wants (the layer's per-eye resolution times `quality`);
//   onPlace(floor): AR tap-to-place put the scene point `floor` on a real surface;
//   onLight(direction, irradiance): the estimated real light changed (scene space); true once sent;
//   onEnd().
export class XrDriver {
  constructor(callbacks) {
    this.callbacks = callbacks;
    this.session = null;
    this.reproject = true;
    this.quality = 1;
    this.showPanel = true;
    this.panelLines = [];
    this.clearColour = [0, 0, 0, 1];
    this.floorPoint = null;   // the scene point tap-to-place stands on a real surface (scene units)
    this.drawLog = [];        // the latest display frames: { t, frame, eyes: [{ position, orientation }] } (tests)
    this.displayFrames = 0;   // XR frames drawn with an image
  }

  get active() {
    return this.session !== null;
  }

  get isAr() {
    return this.mode === 'immersive-ar';
  }

  // 'opaque' (VR, or an AR display without see-through), 'alpha-blend' or 'additive'.
  get blendMode() {
    return this.session?.environmentBlendMode || 'opaque';
  }

  async start(mode, anchor, unitsPerMeter) {
    const optionalFeatures = mode === 'immersive-ar' ? ['hit-test', 'light-estimation', 'local-floor'] : [];
    const session = await navigator.xr.requestSession(mode, { optionalFeatures });
    try {
      const canvas = document.createElement('canvas');
      const gl = canvas.getContext('webgl', { xrCompatible: true, preserveDrawingBuffer: true, alpha: true, premultipliedAlpha: true });
      if (!gl) throw new Error('WebGL is not available');
      if (gl.makeXRCompatible) await gl.makeXRCompatible();
      this.gl = gl;
      this.canvas = canvas;
      this.reprojector = new Reprojector(gl);
      this.panel = new XrPanel(gl);
      await session.updateRenderState({ baseLayer: new XRWebGLLayer(session, gl, { depth: true, ignoreDepthValues: false }) });
      this.space = await session.requestReferenceSpace('local');
      if (mode === 'immersive-ar') await this.startAr(session);
    } catch (error) {
      await session.end();
      throw error;
    }
    this.session = session;
    this.mode = mode;
    this.anchorPosition = [...anchor.position];
    this.anchorOrientation = yawOnly(anchor.orientation);
    this.baseUnitsPerMeter = unitsPerMeter;
    this.unitsPerMeter = unitsPerMeter;
    this.placed = null;      // { hit (XR space), floor (scene) } once tap-to-place put the scene down
    this.lastSent = null;
    this.eyeSize = null;
    this.sourceViews = new Map();  // pose id -> the eyes it asked for (frames of masters without `views`)
    session.addEventListener('end', () => {
      this.session = null;
      this.hitTestSource?.cancel?.();
      this.hitTestSource = null;
      this.callbacks.onEnd?.();
    });
    session.addEventListener('select', () => this.placeAtHit());
    this.listenForSqueeze();
    this.listenForGrab();
    session.requestAnimationFrame((t, frame) => this.onXrFrame(t, frame));
  }

  async startAr(session) {
    this.hitTestSource = null;
    this.lightProbe = null;
    this.lastHit = null;
    this.lastLight = null;
    try {
      const viewer = await session.requestReferenceSpace('viewer');
      this.hitTestSource = await session.requestHitTestSource?.({ space: viewer });
    } catch {
      this.hitTestSource = null;  // no hit test: the scene stays where the session began
    }
    try {
      this.lightProbe = await session.requestLightProbe?.();
    } catch {
      this.lightProbe = null;
    }
  }

  end() {
    this.session?.end();
  }

  // The next display frame sends its pose even inside the dead band (a new driver, a new anchor).
  resend() {
    this.lastSent = null;
  }

  // Remembers the eyes a pose asked for, for frames whose header does not name them.
  posed(id, views) {
    this.sourceViews.set(id, views);
    if (this.sourceViews.size > 256) this.sourceViews.delete(this.sourceViews.keys().next().value);
  }

  // A new frame from the master, decoded: { header, width, height, bands: [{ y, bitmap }], video, depth,
  // alpha } (video: a decoded picture instead of bands). onDrawn(t) is called once a display frame has
  // drawn it, with that frame's predicted display time. Takes the bitmaps and the picture (closes them
  // once they are on the GPU).
  showFrame(frame, onDrawn) {
    const header = frame.header;
    const views = header.views ?? this.sourceViews.get(header.pose_id);
    if (this.reprojector && views) {
      this.reprojector.upload({ eyes: header.eyes || 1, width: header.width, height: header.height, bands: frame.bands,
        video: frame.video, yuv: frame.yuv, views, depth: frame.depth, near: header.depth?.near, depthPlane: header.depth, alpha: frame.alpha });
      this.frameNumber = header.frame;
      this.onDrawn = onDrawn;
    }
    for (const band of frame.bands) band.bitmap.close();
    frame.video?.close();
  }

  toScene(transform) {
    return {
      position: add(this.anchorPosition, rotate(this.anchorOrientation, scale(positionOf(transform), this.unitsPerMeter))),
      orientation: multiply(this.anchorOrientation, quaternionOf(transform)),
    };
  }

  gazePoint(frame, pose, frustum) {
    const eye = pose.views[0];
    for (const source of this.session.inputSources || []) {
      if (source.targetRayMode !== 'gaze') continue;
      const ray = frame.getPose(source.targetRaySpace, this.space);
      if (!ray) continue;
      // The gaze direction in the first eye's own frame.
      const world = rotate(quaternionOf(ray.transform), [0, 0, -1]);
      const point = imagePoint(rotate(conjugate(quaternionOf(eye.transform)), world), frustum);
      if (point) return point;
    }
    return imagePoint([0, 0, -1], frustum);  // the view centre: straight ahead of the eye
  }

  // Past the dead band: the viewer turned or moved enough since the last pose sent, or the eyes'
  // frusta changed, or a second passed with any change at all.
  pastDeadBand(viewer, views, t) {
    const last = this.lastSent;
    if (!last) return true;
    const same = JSON.stringify(views) === last.key;
    if (same) return false;
    if (views.some((view, i) => view.frustum.some((v, k) => v !== last.views[i]?.frustum[k]))) return true;
    const metres = Math.hypot(...subtract(viewer.position, last.viewer.position)) / this.unitsPerMeter;
    return metres > DEAD_BAND_METRES || angleBetween(viewer.orientation, last.viewer.orientation) > DEAD_BAND_RADIANS ||
      t - last.t > RESEND_MS;
  }

  onXrFrame(t, frame) {
    const session = this.session;
    if (!session) return;
    session.requestAnimationFrame((t2, frame2) => this.onXrFrame(t2, frame2));
    const pose = frame.getViewerPose(this.space);
    if (!pose || pose.views.length === 0) return;
    const layer = session.renderState.baseLayer;
    const xrViews = pose.views.slice(0, 2);
    this.updateEyeSize(layer, xrViews[0]);
    if (this.isAr) this.trackAr(frame, t);
    this.trackGrab(frame);
    const views = xrViews.map((view) => ({ ...this.toScene(view.transform), frustum: frustumFromProjection(view.projectionMatrix) }));
    const viewer = this.toScene(pose.transform);
    if (this.pastDeadBand(viewer, views, t)) {
      this.lastSent = { viewer, views, key: JSON.stringify(views), t };
      this.callbacks.onPose({ ...viewer, views, gaze: this.gazePoint(frame, pose, views[0].frustum) });
    }
    if (this.showPanel) this.panel.show(this.callbacks.panelLines?.(t) ?? [], t);
    this.draw(layer, xrViews, views, pose, t);
    if (this.reprojector.ready) {
      const onDrawn = this.onDrawn;
      this.onDrawn = null;
      onDrawn?.(t);
    }
  }

  draw(layer, xrViews, views, pose, t) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
    const seeThrough = this.blendMode !== 'opaque';
    const clear = seeThrough ? [0, 0, 0, 0] : this.clearColour;
    gl.clearColor(clear[0], clear[1], clear[2], clear[3]);
    gl.clearDepth(1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    const state = this.session.renderState;
    const depthRange = { near: state.depthNear ?? 0.1, far: state.depthFar ?? 1000, unitsPerMeter: this.unitsPerMeter };
    const drawn = [];
    xrViews.forEach((xrView, i) => {
      const viewport = layer.getViewport(xrView);
      if (!viewport) return;
      const rect = [viewport.x, viewport.y, viewport.width, viewport.height];
      if (this.reprojector.drawEye(i, views[i], rect, { reproject: this.reproject, useAlpha: this.blendMode === 'alpha-blend', depthRange })) {
        drawn.push({ position: views[i].position, orientation: views[i].orientation });
      }
      if (this.showPanel) {
        gl.viewport(...rect);
        this.panel.draw(poseOf(pose.transform), poseOf(xrView.transform), xrView.projectionMatrix);
      }
    });
    if (drawn.length) {
      this.displayFrames += 1;
      this.drawLog.push({ t, frame: this.frameNumber, eyes: drawn });
      if (this.drawLog.length > 600) this.drawLog.shift();
    }
  }

  updateEyeSize(layer, firstView) {
    const viewport = layer.getViewport(firstView);
    const width = viewport?.width || layer.framebufferWidth / 2;
    const height = viewport?.height || layer.framebufferHeight;
    const size = [Math.max(8, Math.round(width * this.quality)), Math.max(8, Math.round(height * this.quality))];
    if (this.eyeSize && this.eyeSize[0] === size[0] && this.eyeSize[1] === size[1]) return;
    this.eyeSize = size;
    this.callbacks.onEyeSize?.(size);
  }

  setQuality(quality) {
    this.quality = quality;
    this.eyeSize = null;  // the next display frame asks for the new size
  }

  // ---- AR ----

  trackAr(frame, t) {
    if (this.hitTestSource) {
      const hit = frame.getHitTestResults(this.hitTestSource)[0]?.getPose(this.space);
      this.lastHit = hit ? positionOf(hit.transform) : null;
    }
    if (this.lightProbe) {
      const estimate = frame.getLightEstimate?.(this.lightProbe);
      if (estimate?.primaryLightDirection && estimate.primaryLightIntensity) this.estimatedLight(frame, estimate, t);
    }
    this.trackTwoHandScale(frame);
  }

  // Tap-to-place: the scene's floor point goes where the hit test ray meets a real surface.
  placeAtHit() {
    if (!this.lastHit || !this.floorPoint) return;
    this.placed = { hit: this.lastHit, floor: this.floorPoint };
    this.anchorAtPlacement();
    this.callbacks.onPlace?.(this.placed.floor);
  }

  // Keeps the placed floor point on its real surface: anchor = floor - R * (hit * units per metre).
  anchorAtPlacement() {
    if (!this.placed) return;
    this.anchorPosition = subtract(this.placed.floor, rotate(this.anchorOrientation, scale(this.placed.hit, this.unitsPerMeter)));
    this.resend();
  }

  // The scene's size against the real world: 1 shows it at its own scale (units_per_meter), 2 twice as
  // large. The placed floor point stays where it stands.
  setScale(factor) {
    if (!(factor > 0)) return;
    this.unitsPerMeter = this.baseUnitsPerMeter / factor;
    this.anchorAtPlacement();
    this.resend();
    this.callbacks.onScale?.(factor);
  }

  get sceneScale() {
    return this.baseUnitsPerMeter / this.unitsPerMeter;
  }

  // Both hands squeezing: pulling them apart makes the scene larger, in proportion to their distance.
  trackTwoHandScale(frame) {
    const grips = [];
    for (const source of this.session.inputSources || []) {
      if (!source.gripSpace || !this.squeezing?.has(source)) continue;
      const pose = frame.getPose(source.gripSpace, this.space);
      if (pose) grips.push(positionOf(pose.transform));
    }
    if (grips.length < 2) {
      this.pinch = null;
      return;
    }
    const distance = Math.hypot(...subtract(grips[0], grips[1]));
    if (!this.pinch) this.pinch = { distance, scale: this.sceneScale };
    else if (this.pinch.distance > 0.01) this.setScale(this.pinch.scale * (distance / this.pinch.distance));
  }

  // Grab (callbacks.grab() gives the page's Grab while grabbing is on): a controller's select (VR; in AR
  // select places the scene) or squeeze picks along its target ray, and the object then moves with the
  // controller as the hand holds it (its pose, turning included) until that button is let go, the
  // controller goes (inputsourceschange) or the session ends. In AR a second hand's squeeze scales the
  // scene instead: it lets go.
  listenForGrab() {
    this.grabSource = null;
    const start = (event) => {
      const grab = this.callbacks.grab?.();
      if (!grab || this.grabSource || event.inputSource.targetRayMode !== 'tracked-pointer') return;
      if (event.type === 'selectstart' && this.isAr) return;
      if (event.type === 'squeezestart' && this.twoHandScaling()) return;
      const hand = this.targetRayPose(event.frame, event.inputSource);
      if (!hand) return;
      this.grabSource = { source: event.inputSource, end: event.type === 'selectstart' ? 'selectend' : 'squeezeend', grab };
      grab.begin(poseRay(hand), hand);
    };
    const end = (event) => {
      if (this.grabSource?.source !== event.inputSource || this.grabSource.end !== event.type) return;
      this.letGo();
    };
    for (const name of ['selectstart', 'squeezestart']) this.session.addEventListener(name, start);
    for (const name of ['selectend', 'squeezeend']) this.session.addEventListener(name, end);
    this.session.addEventListener('inputsourceschange', (event) => {
      if (this.grabSource && event.removed?.includes(this.grabSource.source)) this.letGo();
    });
    this.session.addEventListener('end', () => this.letGo());
  }

  letGo() {
    this.grabSource?.grab.end();
    this.grabSource = null;
  }

  // Both hands squeeze in AR: they scale the scene (trackTwoHandScale).
  twoHandScaling() {
    return this.isAr && this.squeezing.size > 1;
  }

  // The controller's target ray pose in scene space, or null while it is not tracked.
  targetRayPose(frame, source) {
    const pose = frame?.getPose(source.targetRaySpace, this.space);
    return pose ? this.toScene(pose.transform) : null;
  }

  // Once a display frame: the grabbed object follows its controller, and its transform goes out now
  // (a headset may not run the page's own animation frames while it presents). A controller that
  // lost tracking holds the object where it was.
  trackGrab(frame) {
    const held = this.grabSource;
    if (!held) return;
    if (held.end === 'squeezeend' && this.twoHandScaling()) return this.letGo();
    const hand = this.targetRayPose(frame, held.source);
    if (hand) held.grab.move(poseRay(hand), hand);
    held.grab.flush();
  }

  listenForSqueeze() {
    this.squeezing = new Set();
    this.session.addEventListener('squeezestart', (event) => this.squeezing.add(event.inputSource));
    this.session.addEventListener('squeezeend', (event) => this.squeezing.delete(event.inputSource));
  }

  // primaryLightDirection points towards the light (XR space); the scene's sun travels the other way.
  estimatedLight(frame, estimate, t) {
    const d = estimate.primaryLightDirection;
    const i = estimate.primaryLightIntensity;
    let towardsLight = [d.x, d.y, d.z];
    const probe = this.lightProbe.probeSpace && frame.getPose(this.lightProbe.probeSpace, this.space);
    if (probe) towardsLight = rotate(quaternionOf(probe.transform), towardsLight);
    const length = Math.hypot(...towardsLight);
    if (!(length > 0)) return;
    const direction = rotate(this.anchorOrientation, scale(towardsLight, -1 / length));
    const irradiance = [i.x, i.y, i.z].map((v) => Math.min(1e4, Math.max(0, v)));
    const last = this.lastLight;
    if (last) {
      if (t - last.t < LIGHT_INTERVAL_MS) return;
      const turn = Math.acos(Math.min(1, direction.reduce((s, v, k) => s + v * last.direction[k], 0)));
      const before = Math.max(1e-6, Math.hypot(...last.irradiance));
      const change = Math.hypot(...subtract(irradiance, last.irradiance)) / before;
      if (turn < LIGHT_TURN_RADIANS && change < LIGHT_CHANGE) return;
    }
    // Kept as the last one sent only once sent: one estimated while the master is away goes later.
    if (this.callbacks.onLight?.(direction, irradiance)) this.lastLight = { direction, irradiance, t };
  }
}
