// Unit quaternions as [w, x, y, z] arrays (the protocol's order) and the 3-vector helpers the fly camera
// and the XR mapping need. Cameras look down -z with +y up.

export function multiply(a, b) {
  const [aw, ax, ay, az] = a;
  const [bw, bx, by, bz] = b;
  return [
    aw * bw - ax * bx - ay * by - az * bz,
    aw * bx + ax * bw + ay * bz - az * by,
    aw * by - ax * bz + ay * bw + az * bx,
    aw * bz + ax * by - ay * bx + az * bw,
  ];
}

export function fromAxisAngle(axis, radians) {
  const s = Math.sin(radians / 2);
  return [Math.cos(radians / 2), axis[0] * s, axis[1] * s, axis[2] * s];
}

export function normalize(q) {
  const n = Math.hypot(q[0], q[1], q[2], q[3]) || 1;
  return [q[0] / n, q[1] / n, q[2] / n, q[3] / n];
}

// v rotated by q.
export function rotate(q, v) {
  const p = multiply(multiply(q, [0, v[0], v[1], v[2]]), [q[0], -q[1], -q[2], -q[3]]);
  return [p[1], p[2], p[3]];
}

// The rotation about +y alone that turns -z toward q's view direction projected on the ground plane
// (identity when q looks straight up or down).
export function yawOnly(q) {
  const forward = rotate(q, [0, 0, -1]);
  if (Math.hypot(forward[0], forward[2]) < 1e-9) return [1, 0, 0, 0];
  return fromAxisAngle([0, 1, 0], Math.atan2(-forward[0], -forward[2]));
}

export function add(a, b) {
  return [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
}

export function scale(v, s) {
  return [v[0] * s, v[1] * s, v[2] * s];
}

export function subtract(a, b) {
  return [a[0] - b[0], a[1] - b[1], a[2] - b[2]];
}

// The inverse rotation of a unit quaternion.
export function conjugate(q) {
  return [q[0], -q[1], -q[2], -q[3]];
}

// The rotation angle between two unit quaternions, in radians.
export function angleBetween(a, b) {
  const dot = Math.abs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  return 2 * Math.acos(Math.min(1, dot));
}

// The 3x3 rotation matrix of q, column-major (WebGL's uniformMatrix3fv order).
export function matrix3(q) {
  const [w, x, y, z] = q;
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y + w * z), 2 * (x * z - w * y),
    2 * (x * y - w * z), 1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
    2 * (x * z + w * y), 2 * (y * z - w * x), 1 - 2 * (x * x + y * y),
  ];
}
