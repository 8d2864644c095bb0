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
(() => {
  const config = __CONFIG__;
  const state = { session: null, gl: null, frames: 0, poses: {}, hits: [], light: null, hitTestSources: 0, lightProbes: 0 };
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

  class FakeFrame {
    constructor(session) { this.session = session; }
    getViewerPose() { return viewerPose; }
    getPose(space) { return space === gazeSpace && config.gaze ? { transform: transform({ position: [0, 0, 0], orientation: config.gaze.orientation }) } : null; }
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
        callback(t, new FakeFrame(this));
      });
    }
    end() {
      this.ended = true;
      this.dispatchEvent(new Event('end'));
      return Promise.resolve();
    }
  }
  state.select = () => state.session.dispatchEvent(new Event('select'));

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
