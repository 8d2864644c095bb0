// WebXR driving: an immersive session whose every frame yields the viewer pose and each eye's view
// (pose and off-axis frustum) in scene space, and whose layer shows the eye images the master returns,
// one textured quad per eye viewport.
import { add, multiply, rotate, scale, yawOnly } from './quaternion.js';

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

const VERTEX_SHADER = `
attribute vec2 corner;
uniform vec4 source;  // u0, v0, u1, v1 of the eye's part of the image (v down)
varying vec2 uv;
void main() {
  vec2 t = corner * 0.5 + 0.5;
  uv = vec2(mix(source.x, source.z, t.x), mix(source.w, source.y, t.y));
  gl_Position = vec4(corner, 0.0, 1.0);
}`;
const FRAGMENT_SHADER = `
precision mediump float;
uniform sampler2D image;
varying vec2 uv;
void main() { gl_FragColor = texture2D(image, uv); }`;

// Draws the latest eye images (one texture, eyes side by side) into the XR layer's eye viewports.
class EyeImageDrawer {
  constructor(gl) {
    this.gl = gl;
    const program = gl.createProgram();
    for (const [kind, text] of [[gl.VERTEX_SHADER, VERTEX_SHADER], [gl.FRAGMENT_SHADER, FRAGMENT_SHADER]]) {
      const shader = gl.createShader(kind);
      gl.shaderSource(shader, text);
      gl.compileShader(shader);
      if (!gl.getShaderParameter(shader, gl.COMPILE_STATUS)) throw new Error(gl.getShaderInfoLog(shader));
      gl.attachShader(program, shader);
    }
    gl.linkProgram(program);
    if (!gl.getProgramParameter(program, gl.LINK_STATUS)) throw new Error(gl.getProgramInfoLog(program));
    this.program = program;
    this.corner = gl.getAttribLocation(program, 'corner');
    this.source = gl.getUniformLocation(program, 'source');
    this.quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
    this.texture = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    for (const [name, value] of [[gl.TEXTURE_MIN_FILTER, gl.LINEAR], [gl.TEXTURE_MAG_FILTER, gl.LINEAR],
      [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) {
      gl.texParameteri(gl.TEXTURE_2D, name, value);
    }
    this.eyes = 0;
  }

  // A frame's bands ({ width, height, bands: [{ y, bitmap }] }), each into its rows of the texture.
  upload(frame, eyes) {
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    if (this.width !== frame.width || this.height !== frame.height) {
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, frame.width, frame.height, 0, gl.RGBA, gl.UNSIGNED_BYTE, null);
      this.width = frame.width;
      this.height = frame.height;
    }
    for (const band of frame.bands) gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, band.y, gl.RGBA, gl.UNSIGNED_BYTE, band.bitmap);
    this.eyes = eyes;
  }

  draw(layer, views) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, layer.framebuffer);
    gl.clearColor(0, 0, 0, 1);
    gl.clear(gl.COLOR_BUFFER_BIT);
    if (this.eyes === 0) return;
    gl.useProgram(this.program);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.enableVertexAttribArray(this.corner);
    gl.vertexAttribPointer(this.corner, 2, gl.FLOAT, false, 0, 0);
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    views.forEach((view, i) => {
      const viewport = layer.getViewport(view);
      if (!viewport) return;
      gl.viewport(viewport.x, viewport.y, viewport.width, viewport.height);
      // Stereo images hold the left eye on the left; a mono image serves every view.
      const eye = this.eyes === 2 && views.length === 2 ? i : 0;
      const width = 1 / (this.eyes === 2 && views.length === 2 ? 2 : 1);
      gl.uniform4f(this.source, eye * width, 0, (eye + 1) * width, 1);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    });
  }
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
// onPose({ position, orientation, views, gaze }) is called on each XR frame whose pose differs from the
// last one sent; onEnd() when the session ends.
export class XrDriver {
  constructor({ onPose, onEnd }) {
    this.onPose = onPose;
    this.onEnd = onEnd;
    this.session = null;
    this.lastKey = '';
  }

  get active() {
    return this.session !== null;
  }

  async start(mode, anchor, unitsPerMeter) {
    const session = await navigator.xr.requestSession(mode);
    try {
      const canvas = document.createElement('canvas');
      const gl = canvas.getContext('webgl', { xrCompatible: true, preserveDrawingBuffer: true });
      if (!gl) throw new Error('WebGL is not available');
      if (gl.makeXRCompatible) await gl.makeXRCompatible();
      this.gl = gl;
      this.canvas = canvas;
      this.drawer = new EyeImageDrawer(gl);
      await session.updateRenderState({ baseLayer: new XRWebGLLayer(session, gl) });
      this.space = await session.requestReferenceSpace('local');
    } catch (error) {
      await session.end();
      throw error;
    }
    this.session = session;
    this.anchorPosition = [...anchor.position];
    this.anchorOrientation = yawOnly(anchor.orientation);
    this.unitsPerMeter = unitsPerMeter;
    this.lastKey = '';
    session.addEventListener('end', () => {
      this.session = null;
      this.onEnd?.();
    });
    session.requestAnimationFrame((t, frame) => this.onXrFrame(t, frame));
  }

  end() {
    this.session?.end();
  }

  // A new frame from the master: its JPEG bands decoded ({ width, height, bands: [{ y, bitmap }] }),
  // `eyes` images side by side. onDrawn(t) is called once the layer has drawn it (not for a frame
  // replaced before it was drawn). Takes the bitmaps (closes them once they are on the GPU).
  showFrame(frame, eyes, onDrawn) {
    this.drawer?.upload(frame, eyes);
    for (const band of frame.bands) band.bitmap.close();
    this.onDrawn = onDrawn;
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
      const eyeInverse = quaternionOf(eye.transform).map((c, i) => (i === 0 ? c : -c));
      const world = rotate(quaternionOf(ray.transform), [0, 0, -1]);
      const point = imagePoint(rotate(eyeInverse, world), frustum);
      if (point) return point;
    }
    return imagePoint([0, 0, -1], frustum);  // the view centre: straight ahead of the eye
  }

  onXrFrame(t, frame) {
    const session = this.session;
    if (!session) return;
    session.requestAnimationFrame((t2, frame2) => this.onXrFrame(t2, frame2));
    const pose = frame.getViewerPose(this.space);
    if (!pose || pose.views.length === 0) return;
    const views = pose.views.slice(0, 2).map((view) => ({
      ...this.toScene(view.transform),
      frustum: frustumFromProjection(view.projectionMatrix),
    }));
    const viewer = this.toScene(pose.transform);
    const key = JSON.stringify([viewer, views]);
    if (key !== this.lastKey) {
      this.lastKey = key;
      this.onPose({ ...viewer, views, gaze: this.gazePoint(frame, pose, views[0].frustum) });
    }
    this.drawer.draw(session.renderState.baseLayer, pose.views.slice(0, 2));
    const onDrawn = this.onDrawn;
    this.onDrawn = null;
    onDrawn?.(performance.now());
  }
}
