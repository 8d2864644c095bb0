// Reprojection: draws the newest frame from the master as seen from the eye pose of this display frame,
// not the (older) pose it was rendered from. For each output pixel a fragment shader follows the current
// eye's ray into the frame's eye by fixed-point steps: read the depth at the source point, take the point
// on the current ray at that depth, project it into the source eye again. It starts twice: where the
// ray's direction alone lands (rotation only, right for far things) and at the frame's nearest depth
// (so a near edge that moved over the background is found); where both settle on a surface the nearer
// one occludes the other. Where neither settles (a disocclusion) the farther of the last two points wins,
// so the background fills the hole. Frames without depth are reprojected by rotation only. WebGL1, so that it
// runs on every headset browser and on software GL.
import { conjugate, matrix3, multiply, rotate, subtract } from './quaternion.js';
import { compileProgram } from './gl_program.js';

const VERTEX_SHADER = `
attribute vec2 corner;
varying vec2 screen;  // 0..1 over the output viewport, y up
void main() {
  screen = corner * 0.5 + 0.5;
  gl_Position = vec4(corner, 0.0, 1.0);
}`;

const FRAGMENT_SHADER = `
#ifdef GL_FRAGMENT_PRECISION_HIGH
precision highp float;
#else
precision mediump float;
#endif
uniform sampler2D colour;   // RGBA, or the Y plane of a 4:2:0 picture (isYuv)
uniform sampler2D chromaU;  // LUMINANCE at half width and height: the picture's U and V planes (NEAREST)
uniform sampler2D chromaV;
uniform float isYuv;
uniform sampler2D depth;     // LUMINANCE_ALPHA: the little-endian uint16 inverse depth's low, high byte
uniform sampler2D alphaMap;  // LUMINANCE
uniform mat3 toSource;       // a direction of the current eye into the source eye's frame
uniform vec3 origin;         // the current eye's position in the source eye's frame
uniform vec4 target;         // the current eye's frustum: left, right, bottom, top tangents
uniform vec4 source;         // the source eye's frustum
uniform vec4 eyeTexels;      // this eye's part of the textures: u at its left and right edge, then the
                             // u and v range of texel centres inside it (sampling never crosses eyes)
uniform vec2 vRange;
uniform vec3 depthEye;       // this eye's part of the depth texture, which may be coarser than the image
                             // (one sample per k x k pixels): u at its left edge, its u width, v height
uniform float near;
uniform float hasDepth;
uniform float useAlpha;
uniform vec2 depthOut;
uniform vec2 imageSize;      // one eye's pixels
uniform float seedQ;         // the frame's nearest inverse depth (0: nothing hit anywhere)       // the depth buffer value at current-eye depth s (scene units): x + y / s
varying vec2 screen;

// The frame's colour at texture coordinates uv; a 4:2:0 picture is BT.709 limited range (as the
// master's streams signal it) converted here.
vec3 colourAt(vec2 uv) {
  if (isYuv < 0.5) return texture2D(colour, uv).rgb;
  float y = 1.16438 * (texture2D(colour, uv).r - 0.0627451);
  float u = texture2D(chromaU, uv).r - 0.5019608, v = texture2D(chromaV, uv).r - 0.5019608;
  return clamp(vec3(y + 1.79274 * v, y - 0.21325 * u - 0.53291 * v, y + 2.1124 * u), 0.0, 1.0);
}

// Image coordinates (0..1, v down) of a point in the source eye's frame.
vec2 project(vec3 p) {
  vec2 t = p.xy / max(-p.z, 1e-9);
  return vec2((t.x - source.x) / (source.y - source.x), (source.w - t.y) / (source.w - source.z));
}

vec2 texel(vec2 image) {
  return clamp(vec2(mix(eyeTexels.x, eyeTexels.y, image.x), image.y),
               vec2(eyeTexels.z, vRange.x), vec2(eyeTexels.w, vRange.y));
}

float inverseDepth(vec2 image) {
  vec2 t = clamp(image, 0.0, 0.9999);  // NEAREST never crosses into the other eye's samples
  vec4 s = texture2D(depth, vec2(depthEye.x + t.x * depthEye.y, t.y * depthEye.z));
  return floor((s.a * 256.0 + s.r) * 255.0 + 0.5);
}

// How far along the current ray (in the current eye's depth, as the ray's z there is -1) the point lies
// whose depth in the source eye is that of inverse depth q; 0 for nothing hit (infinitely far).
float rayDepth(float q, vec3 ray) {
  if (q < 0.5) return 0.0;
  float z = near * 65535.0 / q;
  return (-z - origin.z) / min(ray.z, -1e-9);
}

// The source image point seen along the current ray at inverse depth q (read at the previous point).
vec2 refine(float q, vec3 ray, vec2 far) {
  float s = rayDepth(q, ray);
  vec3 p = origin + s * ray;
  return (s > 0.0 && p.z < 0.0) ? project(p) : far;
}

// Fixed-point steps along the current ray from 'start': 'point' and its inverse depth 'q', 'settled' 1
// where the steps came to rest (the ray meets the surface there).
void follow(vec2 start, vec3 ray, vec2 far, out vec2 point, out float q, out float settled) {
  vec2 image = start;
  vec2 previous = start;
  float previousQ = 0.0;
  for (int i = 0; i < 4; ++i) {
    previous = image;
    previousQ = inverseDepth(image);
    image = refine(previousQ, ray, far);
  }
  settled = length((image - previous) * imageSize) < 1.5 ? 1.0 : 0.0;
  point = image;
  q = previousQ;
  if (settled < 0.5) {
    float imageQ = inverseDepth(image);
    if (previousQ < imageQ) point = previous;
    else q = imageQ;
  }
}

void main() {
  vec3 ray = toSource * vec3(mix(target.x, target.y, screen.x), mix(target.z, target.w, screen.y), -1.0);
  vec2 far = project(ray);
  vec2 image = far;
  float q = 0.0;
  if (hasDepth > 0.5) {
    float settled;
    follow(far, ray, far, image, q, settled);
    if (seedQ > 0.5) {
      vec2 nearImage;
      float nearQ, nearSettled;
      follow(refine(seedQ, ray, far), ray, far, nearImage, nearQ, nearSettled);
      if (nearSettled > 0.5 && (settled < 0.5 || nearQ > q)) {
        image = nearImage;
        q = nearQ;
      }
    }
  }
#ifdef WRITE_DEPTH
  float s = rayDepth(q, ray);
  gl_FragDepthEXT = s > 0.0 ? clamp(depthOut.x + depthOut.y / s, 0.0, 1.0) : 1.0;
#endif
  vec2 uv = texel(image);
  vec3 rgb = colourAt(uv);
  float alpha = 1.0;
  if (useAlpha > 0.5) alpha = texture2D(alphaMap, uv).r;
  gl_FragColor = vec4(rgb, alpha);
}`;

function makeTexture(gl, filter) {
  const texture = gl.createTexture();
  gl.bindTexture(gl.TEXTURE_2D, texture);
  for (const [name, value] of [[gl.TEXTURE_MIN_FILTER, filter], [gl.TEXTURE_MAG_FILTER, filter],
    [gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE], [gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE]]) {
    gl.texParameteri(gl.TEXTURE_2D, name, value);
  }
  return texture;
}

// The largest inverse depth (the nearest point) of little-endian uint16 depths, from a sample of about
// 64k of them: the seed of the reprojection's search for near edges.
function nearestInverseDepth(bytes) {
  const count = bytes.length >> 1;
  const stride = Math.max(1, Math.floor(count / 65536));
  let nearest = 0;
  for (let i = 0; i < count; i += stride) nearest = Math.max(nearest, bytes[2 * i] | (bytes[2 * i + 1] << 8));
  return nearest;
}

// The frustum a page asked for, from one rendered `guardDegrees` wider on every side.
export function withoutGuardBand(frustum, guardDegrees) {
  if (!(guardDegrees > 0)) return frustum;
  const g = (guardDegrees * Math.PI) / 180;
  const [left, right, bottom, top] = frustum;
  return [Math.tan(Math.atan(left) + g), Math.tan(Math.atan(right) - g), Math.tan(Math.atan(bottom) + g), Math.tan(Math.atan(top) - g)];
}

// An eye pose moved with its head: `eye` belongs to a head at `from`; returns where it is with the head
// at `to` (each { position, orientation }).
export function carryEye(eye, from, to) {
  const turn = multiply(to.orientation, conjugate(from.orientation));
  return {
    position: rotate(turn, subtract(eye.position, from.position)).map((v, i) => v + to.position[i]),
    orientation: multiply(turn, eye.orientation),
    frustum: eye.frustum,
  };
}

// Owns the textures of the newest frame on one WebGL context and draws its eyes reprojected.
export class Reprojector {
  constructor(gl) {
    this.gl = gl;
    // With EXT_frag_depth the warp also writes each pixel's depth, so a compositor that reprojects
    // with the layer's depth (XRWebGLLayer, ignoreDepthValues false) sees the scene's shape.
    this.writesDepth = !!gl.getExtension('EXT_frag_depth');
    const prefix = this.writesDepth ? '#extension GL_EXT_frag_depth : enable\n#define WRITE_DEPTH\n' : '';
    this.program = compileProgram(gl, VERTEX_SHADER, prefix + FRAGMENT_SHADER);
    const uniforms = ['colour', 'depth', 'alphaMap', 'toSource', 'origin', 'target', 'source', 'eyeTexels', 'vRange',
      'near', 'hasDepth', 'useAlpha', 'depthOut', 'imageSize', 'seedQ', 'depthEye', 'chromaU', 'chromaV', 'isYuv'];
    this.uniforms = Object.fromEntries(uniforms.map((name) => [name, gl.getUniformLocation(this.program, name)]));
    this.corner = gl.getAttribLocation(this.program, 'corner');
    this.quad = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.bufferData(gl.ARRAY_BUFFER, new Float32Array([-1, -1, 1, -1, -1, 1, 1, 1]), gl.STATIC_DRAW);
    this.colour = makeTexture(gl, gl.LINEAR);
    this.depth = makeTexture(gl, gl.NEAREST);
    this.alpha = makeTexture(gl, gl.LINEAR);
    // Chroma as its 2x2 block's one sample (nearest), as the streams' encoders took it from the frame.
    this.chromaU = makeTexture(gl, gl.NEAREST);
    this.chromaV = makeTexture(gl, gl.NEAREST);
    for (const [texture, format] of [[this.depth, gl.LUMINANCE_ALPHA], [this.alpha, gl.LUMINANCE], [this.chromaU, gl.LUMINANCE],
      [this.chromaV, gl.LUMINANCE]]) {
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.texImage2D(gl.TEXTURE_2D, 0, format, 1, 1, 0, format, gl.UNSIGNED_BYTE, new Uint8Array(format === gl.LUMINANCE ? 1 : 2));
    }
    this.frame = null;  // { eyes, width (per eye), height, views, near, hasDepth, hasAlpha }
    this.sizes = { colour: '', depth: '', alpha: '', chromaU: '', chromaV: '' };
  }

  get ready() {
    return this.frame !== null;
  }

  // A decoded frame: `bands` [{ y, bitmap }] of the eyes side by side (eyes * width x height), or
  // `video` a decoded picture (VideoFrame) of them, which may be smaller (stretched over the image),
  // or `yuv` such a picture's 4:2:0 planes in memory ({ width, height, y, u, v }: tightly packed bytes;
  // three LUMINANCE uploads and a conversion in the shader cost a software GL a fraction of one RGBA
  // upload of a VideoFrame),
  // `views` the eyes it was rendered from ({ position, orientation, frustum } each), `depth` the raw
  // little-endian uint16 inverse depths (or null) with `near`, in a plane of `depthPlane` { width, height,
  // scale } per eye (the header's depth; absent: the image's size), `alpha` the uint8 alphas (or null).
  upload({ eyes, width, height, bands, video = null, yuv = null, views, depth, near, depthPlane, alpha }) {
    const gl = this.gl;
    const total = eyes * width;
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    // The colour texture holds the picture at its own size; texture coordinates span the whole image.
    let textureWidth = total, textureHeight = height;
    if (yuv) {
      [textureWidth, textureHeight] = [yuv.width, yuv.height];
      this.storeTexture(this.colour, 'colour', gl.LUMINANCE, yuv.width, yuv.height, yuv.y);
      this.storeTexture(this.chromaU, 'chromaU', gl.LUMINANCE, yuv.width / 2, yuv.height / 2, yuv.u);
      this.storeTexture(this.chromaV, 'chromaV', gl.LUMINANCE, yuv.width / 2, yuv.height / 2, yuv.v);
    } else {
      if (video) [textureWidth, textureHeight] = [video.displayWidth, video.displayHeight];
      this.storeTexture(this.colour, 'colour', gl.RGBA, textureWidth, textureHeight, null);
      if (video) gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, gl.RGBA, gl.UNSIGNED_BYTE, video);
      for (const band of bands) gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, band.y, gl.RGBA, gl.UNSIGNED_BYTE, band.bitmap);
    }
    const scale = depthPlane?.scale || 1;
    const depthWidth = depthPlane?.width || width, depthHeight = depthPlane?.height || height;
    const hasDepth = depth && depth.length === eyes * depthWidth * depthHeight * 2 && near > 0;
    if (hasDepth) this.storeTexture(this.depth, 'depth', gl.LUMINANCE_ALPHA, eyes * depthWidth, depthHeight, depth);
    const hasAlpha = alpha && alpha.length === total * height;
    if (hasAlpha) this.storeTexture(this.alpha, 'alpha', gl.LUMINANCE, total, height, alpha);
    this.frame = { eyes, width, height, views, near: near || 0, hasDepth: !!hasDepth, hasAlpha: !!hasAlpha, isYuv: !!yuv,
      textureEyeWidth: textureWidth / eyes, textureHeight,
      depthEyeWidth: (width / scale) / (eyes * depthWidth), depthEyeHeight: (height / scale) / depthHeight,
      seedQ: hasDepth ? nearestInverseDepth(depth) : 0 };
  }

  storeTexture(texture, name, format, width, height, pixels) {
    const gl = this.gl;
    gl.bindTexture(gl.TEXTURE_2D, texture);
    const size = `${width}x${height} ${format}`;
    if (this.sizes[name] !== size) {
      gl.texImage2D(gl.TEXTURE_2D, 0, format, width, height, 0, format, gl.UNSIGNED_BYTE, pixels);
      this.sizes[name] = size;
    } else if (pixels) {
      gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, width, height, format, gl.UNSIGNED_BYTE, pixels);
    }
  }

  // Draws eye `eye` of the frame into the bound framebuffer's `viewport` ([x, y, width, height]) as seen
  // by `current` ({ position, orientation, frustum }); with reproject false, as it was rendered (the
  // source eye's own pose, the current frustum). `useAlpha`: output the frame's alpha (premultiplied
  // colour) rather than 1. `depthRange` { near, far, unitsPerMeter } (near and far in metres, as
  // XRRenderState's depthNear and depthFar): write the depth buffer for that projection.
  drawEye(eye, current, viewport, { reproject = true, useAlpha = false, depthRange = null } = {}) {
    const frame = this.frame;
    if (!frame) return false;
    const gl = this.gl;
    const u = this.uniforms;
    const sourceEye = frame.views[Math.min(eye, frame.views.length - 1)];
    const textureEye = Math.min(eye, frame.eyes - 1);
    const pose = reproject ? current : sourceEye;
    const inverse = conjugate(sourceEye.orientation);
    gl.useProgram(this.program);
    gl.viewport(viewport[0], viewport[1], viewport[2], viewport[3]);
    gl.uniformMatrix3fv(u.toSource, false, matrix3(multiply(inverse, pose.orientation)));
    gl.uniform3fv(u.origin, rotate(inverse, subtract(pose.position, sourceEye.position)));
    gl.uniform4fv(u.target, current.frustum);
    gl.uniform4fv(u.source, sourceEye.frustum);
    const eyeTexels = frame.textureEyeWidth, total = frame.eyes * eyeTexels;
    gl.uniform4f(u.eyeTexels, textureEye / frame.eyes, (textureEye + 1) / frame.eyes,
      (textureEye * eyeTexels + 0.5) / total, ((textureEye + 1) * eyeTexels - 0.5) / total);
    gl.uniform2f(u.vRange, 0.5 / frame.textureHeight, 1 - 0.5 / frame.textureHeight);
    gl.uniform3f(u.depthEye, textureEye / frame.eyes, frame.depthEyeWidth, frame.depthEyeHeight);
    gl.uniform1f(u.near, frame.near);
    gl.uniform2f(u.imageSize, frame.width, frame.height);
    gl.uniform1f(u.seedQ, frame.seedQ);
    gl.uniform1f(u.hasDepth, frame.hasDepth && reproject ? 1 : 0);
    gl.uniform1f(u.useAlpha, useAlpha && frame.hasAlpha ? 1 : 0);
    gl.uniform1f(u.isYuv, frame.isYuv ? 1 : 0);
    const textures = [[this.colour, 'colour'], [this.depth, 'depth'], [this.alpha, 'alphaMap'], [this.chromaU, 'chromaU'],
      [this.chromaV, 'chromaV']];
    textures.forEach(([texture, name], unit) => {
      gl.activeTexture(gl.TEXTURE0 + unit);
      gl.bindTexture(gl.TEXTURE_2D, texture);
      gl.uniform1i(u[name], unit);
    });
    gl.activeTexture(gl.TEXTURE0);
    gl.bindBuffer(gl.ARRAY_BUFFER, this.quad);
    gl.enableVertexAttribArray(this.corner);
    gl.vertexAttribPointer(this.corner, 2, gl.FLOAT, false, 0, 0);
    if (this.writesDepth && depthRange) {
      // Window depth of a perspective projection at eye depth d metres: f / (f - n) - f n / ((f - n) d).
      const { near, far, unitsPerMeter } = depthRange;
      gl.uniform2f(u.depthOut, far / (far - near), (-far * near * unitsPerMeter) / (far - near));
      gl.enable(gl.DEPTH_TEST);
      gl.depthFunc(gl.ALWAYS);  // every pixel is drawn once; the test is on only so depth is written
    } else {
      gl.uniform2f(u.depthOut, 1, 0);
    }
    gl.disable(gl.BLEND);
    gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
    gl.disable(gl.DEPTH_TEST);
    this.lastDraw = { eye, position: [...current.position], orientation: [...current.orientation] };
    return true;
  }
}
