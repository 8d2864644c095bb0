// A scripted stand-in for WebXR, run before the page's own scripts: navigator.xr offers immersive-vr,
// and its session yields, on every animation frame, one fixed viewer pose with two eye views of known
// poses and projection matrices, plus a gaze input source. XRWebGLLayer draws into the page's own
// WebGL canvas (framebuffer null), the two eye viewports side by side, so the test can read back what
// the page drew. The test replaces __CONFIG__ with a JSON object:
//   { eyeWidth, eyeHeight, viewer: {position, orientation}, views: [{eye, position, orientation, projection}],
//     gaze: {orientation} | null }     (orientation as {x, y, z, w}; projection: 16 numbers, column-major)
(() => {
  const config = __CONFIG__;
  const state = { session: null, gl: null, frames: 0 };
  window.__fakeXr = state;

  const transform = (pose) => ({
    position: new DOMPointReadOnly(pose.position[0], pose.position[1], pose.position[2], 1),
    orientation: new DOMPointReadOnly(pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w),
  });
  const views = config.views.map((v) => ({ eye: v.eye, transform: transform(v), projectionMatrix: new Float32Array(v.projection) }));
  const viewerPose = { transform: transform(config.viewer), views };
  const gazeSpace = { kind: 'gaze' };

  class FakeFrame {
    constructor(session) { this.session = session; }
    getViewerPose() { return viewerPose; }
    getPose(space) { return space === gazeSpace && config.gaze ? { transform: transform({ position: [0, 0, 0], orientation: config.gaze.orientation }) } : null; }
  }

  class FakeSession extends EventTarget {
    constructor(mode) {
      super();
      this.mode = mode;
      this.ended = false;
      this.renderState = { baseLayer: null };
      this.inputSources = config.gaze ? [{ targetRayMode: 'gaze', targetRaySpace: gazeSpace, handedness: 'none' }] : [];
    }
    updateRenderState(state) { Object.assign(this.renderState, state); }
    requestReferenceSpace(type) { return Promise.resolve({ type }); }
    requestAnimationFrame(callback) {
      return window.requestAnimationFrame((t) => {
        if (this.ended) return;
        state.frames += 1;
        callback(t, new FakeFrame(this));
      });
    }
    end() {
      this.ended = true;
      this.dispatchEvent(new Event('end'));
      return Promise.resolve();
    }
  }

  const xr = {
    isSessionSupported: (mode) => Promise.resolve(mode === 'immersive-vr'),
    requestSession: (mode) => {
      if (mode !== 'immersive-vr') return Promise.reject(new DOMException(`${mode} not offered`, 'NotSupportedError'));
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
