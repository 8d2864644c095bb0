// A scripted stand-in for WebXR, run before the page's own scripts: navigator.xr offers immersive-vr
// (and immersive-ar when the config asks), and its session yields, on every animation frame, the
// scripted viewer pose with two eye views of known poses and projection matrices, plus a gaze input
// source. XRWebGLLayer draws into the page's own WebGL canvas (framebuffer null), the two eye viewports
// side by side, so the test can read back what the page drew. The test replaces __CONFIG__ with:
//   { eyeWidth, eyeHeight, viewer: {position, orientation}, views: [{eye, position, orientation, projection}],
//     gaze: {orientation} | null, ar: {blendMode} | absent }
//   (orientation as {x, y, z, w}; projection: 16 numbers, column-major)
// window.__fakeXr scripts it while it runs:
//   setPose({viewer, views}): the pose of the next frames (views as in the config);
//   poses: {t, viewer, views} each frame gave, by frame number (frames counts from 1; t: its time);
//   hits: [[x, y, z], ...] the hit test results in 'local' space; select(): a tap (the 'select' event);
//   light: {direction: [x, y, z] (towards the light), intensity: [r, g, b]} | null.
//   setController(handedness, {targetRay: {position, orientation}, grip?: {position, orientation}}): a
//     tracked-pointer controller ('left' or 'right'; connected on first use with an inputsourceschange)
//     whose target ray (and grip, else the ray's pose) the next frames report in any space asked for;
//   press(handedness, 'select' | 'squeeze'), release(handedness, action): the next frame dispatches
//     selectstart / squeezestart, or select + selectend / squeeze + squeezeend (in that order), as
//     XRInputSourceEvents whose event frame answers getPose only while they are dispatched (and never
//     getViewerPose), before the frame's animation callback, as a WebXR session does;
//   disconnect(handedness): the controller goes: an action in progress ends without completing
//     (selectend / squeezeend, no select), then inputsourceschange names it removed;
//   inputEvents: [{type, handedness, frame}] every input event dispatched.
(() => {
  const config = __CONFIG__;
  const state = { session: null, gl: null, frames: 0, poses: {}, hits: [], light: null, hitTestSources: 0, lightProbes: 0, inputEvents: [] };
  window.__fakeXr = state;

  const transform = (pose) => ({
    position: new DOMPointReadOnly(pose.position[0], pose.position[1], pose.position[2], 1),
    orientation: new DOMPointReadOnly(pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w),
  });
  const viewerPoseOf = ({ viewer, views }) => ({
    transform: transform(viewer),
    views: views.map((v) => ({ eye: v.eye, transform: transform(v), projectionMatrix: new Float32Array(v.projection) })),
  });
  let scripted = { viewer: config.viewer, views: config.views };
  let viewerPose = viewerPoseOf(scripted);
  state.setPose = (pose) => {
    scripted = { viewer: pose.viewer, views: pose.views || scripted.views };
    viewerPose = viewerPoseOf(scripted);
  };
  const gazeSpace = { kind: 'gaze' };
  const viewerSpace = { type: 'viewer' };

  // Tracked-pointer controllers by handedness: { source, targetRay, grip, pressed: Set of actions }.
  const controllers = new Map();
  // Input events the next frame dispatches before its animation callback: [{type, source, added}].
  let queued = [];

  // A frame's methods answer only while it is active: during its animation callback, or while its
  // input events are dispatched (an event frame, which has no viewer pose).
  const inactive = () => new DOMException('the frame is not active', 'InvalidStateError');
  class FakeFrame {
    constructor(session, { event = false } = {}) {
      this.session = session;
      this.active = true;
      this.event = event;
    }
    getViewerPose() {
      if (!this.active || this.event) throw inactive();
      return viewerPose;
    }
    getPose(space) {
      if (!this.active) throw inactive();
      if (space === gazeSpace) return config.gaze ? { transform: transform({ position: [0, 0, 0], orientation: config.gaze.orientation }) } : null;
      for (const c of controllers.values()) {
        if (space === c.source.targetRaySpace) return { transform: transform(c.targetRay) };
        if (space === c.source.gripSpace) return { transform: transform(c.grip || c.targetRay) };
      }
      return null;
    }
    getHitTestResults() {
      return state.hits.map((p) => ({ getPose: () => ({ transform: transform({ position: p, orientation: { x: 0, y: 0, z: 0, w: 1 } }) }) }));
    }
    getLightEstimate() {
      const light = state.light;
      if (!light) return null;
      return { primaryLightDirection: new DOMPointReadOnly(...light.direction, 0), primaryLightIntensity: new DOMPointReadOnly(...light.intensity, 1) };
    }
  }

  class FakeSession extends EventTarget {
    constructor(mode) {
      super();
      this.mode = mode;
      this.ended = false;
      this.renderState = { baseLayer: null };
      this.environmentBlendMode = mode === 'immersive-ar' ? config.ar.blendMode : 'opaque';
      this.inputSources = config.gaze ? [{ targetRayMode: 'gaze', targetRaySpace: gazeSpace, handedness: 'none' }] : [];
    }
    updateRenderState(state) { Object.assign(this.renderState, state); }
    requestReferenceSpace(type) { return Promise.resolve(type === 'viewer' ? viewerSpace : { type }); }
    requestHitTestSource() {
      state.hitTestSources += 1;
      return Promise.resolve({ cancel() {} });
    }
    requestLightProbe() {
      state.lightProbes += 1;
      return Promise.resolve({ probeSpace: null });
    }
    requestAnimationFrame(callback) {
      return window.requestAnimationFrame((t) => {
        if (this.ended) return;
        state.frames += 1;
        state.poses[state.frames] = { t, ...scripted };
        this.dispatchInput();
        const frame = new FakeFrame(this);
        try {
          callback(t, frame);
        } finally {
          frame.active = false;
        }
      });
    }
    dispatchInput() {
      const events = queued;
      queued = [];
      for (const { type, source, added } of events) {
        if (type === 'inputsourceschange') {
          const change = new Event(type);
          Object.assign(change, { session: this, added: added ? [source] : [], removed: added ? [] : [source] });
          this.dispatchEvent(change);
          continue;
        }
        const frame = new FakeFrame(this, { event: true });
        state.inputEvents.push({ type, handedness: source.handedness, frame: state.frames });
        try {
          this.dispatchEvent(new XRInputSourceEvent(type, { frame, inputSource: source }));
        } finally {
          frame.active = false;
        }
      }
    }
    end() {
      this.ended = true;
      this.dispatchEvent(new Event('end'));
      return Promise.resolve();
    }
  }
  state.select = () => state.session.dispatchEvent(new Event('select'));

  class XRInputSourceEvent extends Event {
    constructor(type, init) {
      super(type);
      this.frame = init.frame;
      this.inputSource = init.inputSource;
    }
  }
  window.XRInputSourceEvent = XRInputSourceEvent;

  const endOf = { select: ['select', 'selectend'], squeeze: ['squeeze', 'squeezeend'] };
  const controller = (handedness) => {
    const c = controllers.get(handedness);
    if (!c) throw new Error(`no ${handedness} controller`);
    return c;
  };
  const checkedAction = (action) => {
    if (!endOf[action]) throw new Error(`no action '${action}' (select or squeeze)`);
    return action;
  };
  state.setController = (handedness, { targetRay, grip }) => {
    let c = controllers.get(handedness);
    if (!c) {
      const source = { targetRayMode: 'tracked-pointer', handedness, targetRaySpace: { kind: `${handedness} target ray` },
                       gripSpace: { kind: `${handedness} grip` }, profiles: ['generic-trigger-squeeze'] };
      c = { source, pressed: new Set() };
      controllers.set(handedness, c);
      state.session.inputSources = [...state.session.inputSources, source];
      queued.push({ type: 'inputsourceschange', source, added: true });
    }
    c.targetRay = targetRay;
    c.grip = grip;
  };
  state.press = (handedness, action) => {
    const c = controller(handedness);
    c.pressed.add(checkedAction(action));
    queued.push({ type: `${action}start`, source: c.source });
  };
  state.release = (handedness, action) => {
    const c = controller(handedness);
    if (!c.pressed.delete(checkedAction(action))) throw new Error(`the ${handedness} controller's ${action} is not pressed`);
    for (const type of endOf[action]) queued.push({ type, source: c.source });
  };
  state.disconnect = (handedness) => {
    const c = controller(handedness);
    for (const action of c.pressed) queued.push({ type: endOf[action][1], source: c.source });
    controllers.delete(handedness);
    state.session.inputSources = state.session.inputSources.filter((s) => s !== c.source);
    queued.push({ type: 'inputsourceschange', source: c.source, added: false });
  };

  const offered = (mode) => mode === 'immersive-vr' || (mode === 'immersive-ar' && !!config.ar);
  const xr = {
    isSessionSupported: (mode) => Promise.resolve(offered(mode)),
    requestSession: (mode) => {
      if (!offered(mode)) return Promise.reject(new DOMException(`${mode} not offered`, 'NotSupportedError'));
      state.session = new FakeSession(mode);
      return Promise.resolve(state.session);
    },
  };
  Object.defineProperty(navigator, 'xr', { value: xr, configurable: true });

  window.XRWebGLLayer = class {
    constructor(session, gl) {
      this.framebuffer = null;
      gl.canvas.width = config.eyeWidth * 2;
      gl.canvas.height = config.eyeHeight;
      this.framebufferWidth = gl.canvas.width;
      this.framebufferHeight = gl.canvas.height;
      state.gl = gl;
    }
    getViewport(view) {
      return { x: view.eye === 'right' ? config.eyeWidth : 0, y: 0, width: config.eyeWidth, height: config.eyeHeight };
    }
  };
  WebGLRenderingContext.prototype.makeXRCompatible = () => Promise.resolve();
})();
