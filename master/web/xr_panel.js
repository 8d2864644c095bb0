// The headset's status panel: a few lines of text (connection, latency, fps, warnings, the latest
// events) drawn into a 2D canvas, uploaded as a texture and shown as a small quad that floats 1.2 m in
// front of the head, below the line of sight. Each eye sees it through its own projection, so it has
// the right depth and does not fight the scene for the eyes' vergence.
import { conjugate, matrix3, rotate, subtract } from './quaternion.js';
import { compileProgram } from './gl_program.js';

const WIDTH = 512;
const HEIGHT = 192;
const CENTRE = [0, -0.32, -1.2];   // metres, in the viewer's frame
const SIZE = [0.48, 0.18];         // metres
const REDRAW_MS = 250;

const VERTEX_SHADER = `
attribute vec3 corner;
attribute vec2 cornerUv;
uniform mat4 toClip;
varying vec2 uv;
void main() {
  uv = cornerUv;
  gl_Position = toClip * vec4(corner, 1.0);
}`;
const FRAGMENT_SHADER = `
precision mediump float;
uniform sampler2D panel;
varying vec2 uv;
void main() { gl_FragColor = texture2D(panel, uv); }`;

// Column-major 4x4 of a rigid transform's inverse: world -> the frame at `position`, `orientation`.
function inverseRigid(position, orientation) {
  const inverse = conjugate(orientation);
  const r = matrix3(inverse);
  const t = rotate(inverse, subtract([0, 0, 0], position));
  return [r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, t[0], t[1], t[2], 1];
}

function rigid(position, orientation) {
  const r = matrix3(orientation);
  return [r[0], r[1], r[2], 0, r[3], r[4], r[5], 0, r[6], r[7], r[8], 0, position[0], position[1], position[2], 1];
}

function multiply4(a, b) {
  const out = new Array(16).fill(0);
  for (let column = 0; column < 4; ++column)
    for (let row = 0; row < 4; ++row)
      for (let k = 0; k < 4; ++k) out[column * 4 + row] += a[k * 4 + row] * b[column * 4 + k];
  return out;
}

export class XrPanel {
  constructor(gl) {
    this.gl = gl;
    this.canvas = document.createElement('canvas');
    this.canvas.width = WIDTH;
    this.canvas.height = HEIGHT;
    this.program = compileProgram(gl, VERTEX_SHADER, FRAGMENT_SHADER);
    this.toClip = gl.getUniformLocation(this.program, 'toClip');
    this.corner = gl.getAttribLocation(this.program, 'corner');
    this.cornerUv = gl.getAttribLocation(this.program, 'cornerUv');
    const [cx, cy, cz] = CENTRE;
    const [w, h] = [SIZE[0] / 2, SIZE[1] / 2];
    this.vertices = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.vertices);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([
      cx - w, cy - h, cz, 0, 1, cx + w, cy - h, cz, 1, 1, cx - w, cy + h, cz, 0, 0, cx + w, cy + h, cz, 1, 0]), gl.STATIC_DRAW);
    this.texture = gl.createTexture();
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    for (const [name, value] of [[gl.TEXTURE_MIN_FILTER, gl.LINEAR], [gl.TEXTURE_MAG_FILTER, gl.LINEAR],
      [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) {
      gl.texParameteri(gl.TEXTURE_2D, name, value);
    }
    this.drawnAt = -Infinity;
    this.text = '';
    this.lines = [];
  }

  // What the panel says: [{ text, kind }] with kind 'ok', 'warn' or 'bad' (colour); redrawn at most
  // four times a second.
  show(lines, now) {
    this.lines = lines;
    const text = JSON.stringify(lines);
    if (text === this.text || now - this.drawnAt < REDRAW_MS) return;
    this.text = text;
    this.drawnAt = now;
    const g = this.canvas.getContext('2d');
    g.clearRect(0, 0, WIDTH, HEIGHT);
    g.fillStyle = 'rgba(18, 22, 29, 0.82)';
    g.beginPath();
    g.roundRect(0, 0, WIDTH, HEIGHT, 18);
    g.fill();
    g.font = '26px system-ui, sans-serif';
    g.textBaseline = 'top';
    const colours = { ok: '#dde3ec', warn: '#f5a623', bad: '#ff5a6e' };
    lines.slice(0, 6).forEach(({ text: line, kind }, i) => {
      g.fillStyle = colours[kind] || colours.ok;
      g.fillText(line, 18, 12 + i * 29, WIDTH - 36);
    });
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, true);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, this.canvas);
    gl.pixelStorei(gl.UNPACK_PREMULTIPLY_ALPHA_WEBGL, false);
  }

  // Into the current viewport: the panel in the viewer's frame (`viewer`, XR space) as eye `eye` sees it
  // (its XR-space pose and projection matrix).
  draw(viewer, eye, projection) {
    if (!this.text) return;
    const gl = this.gl;
    const toClip = multiply4(Array.from(projection), multiply4(inverseRigid(eye.position, eye.orientation), rigid(viewer.position, viewer.orientation)));
    gl.useProgram(this.program);
    gl.uniformMatrix4fv(this.toClip, false, new Float32Array(toClip));
    gl.bindBuffer(gl.ARRAY_BUFFER, this.vertices);
    gl.enableVertexAttribArray(this.corner);
    gl.vertexAttribPointer(this.corner, 3, gl.FLOAT, false, 20, 0);
    gl.enableVertexAttribArray(this.cornerUv);
    gl.vertexAttribPointer(this.cornerUv, 2, gl.FLOAT, false, 20, 12);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.texture);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE_MINUS_SRC_ALPHA);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.disable(gl.BLEND);
    gl.disableVertexAttribArray(this.cornerUv);
  }
}
