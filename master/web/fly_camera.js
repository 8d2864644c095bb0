// Fly camera for desktops and phones: WASD / arrow keys move (Q/E or PageDown/PageUp down/up, Shift
// faster), a mouse drag or a one-finger drag looks around, a two-finger drag or the on-screen pad moves.
// Speed follows the scene's size: crossing the scene's bounding-box diagonal takes about four seconds.
import { add, fromAxisAngle, multiply, normalize, rotate, scale } from './quaternion.js';

const MOVE_KEYS = {
  KeyW: [0, 0, -1], ArrowUp: [0, 0, -1],
  KeyS: [0, 0, 1], ArrowDown: [0, 0, 1],
  KeyA: [-1, 0, 0], ArrowLeft: [-1, 0, 0],
  KeyD: [1, 0, 0], ArrowRight: [1, 0, 0],
  KeyE: [0, 1, 0], PageUp: [0, 1, 0],
  KeyQ: [0, -1, 0], PageDown: [0, -1, 0],
};
const MAX_PITCH_SINE = 0.995;  // keeps the view off the poles, where yaw turns into roll

export class FlyCamera {
  constructor() {
    this.position = [0, 0, 0];
    this.orientation = [1, 0, 0, 0];
    this.fovRadians = Math.PI / 3;
    this.unitsPerSecond = 1;
    this.held = new Set();      // movement keys and on-screen pad directions held now
    this.padMove = [0, 0, 0];   // on-screen pad / two-finger drag, camera-local, -1..1 per axis
    this.lookDelta = [0, 0];    // pending yaw/pitch in radians from drags
    this.fast = false;
  }

  // Starts from the scene's camera and sizes the speed to its bounds (session message).
  reset(scene) {
    const camera = scene?.camera;
    if (camera) {
      this.position = [...camera.position];
      this.orientation = normalize(camera.orientation);
      if (camera.fov > 0) this.fovRadians = (camera.fov * Math.PI) / 180;
    }
    const bounds = scene?.bounds;
    if (bounds) {
      const diagonal = Math.hypot(bounds[1][0] - bounds[0][0], bounds[1][1] - bounds[0][1], bounds[1][2] - bounds[0][2]);
      if (diagonal > 0) this.unitsPerSecond = diagonal / 4;
    }
  }

  keyDown(code, shift) {
    this.fast = shift;
    if (!(code in MOVE_KEYS)) return false;
    this.held.add(code);
    return true;
  }

  keyUp(code, shift) {
    this.fast = shift;
    return this.held.delete(code);
  }

  releaseAll() {
    this.held.clear();
    this.padMove = [0, 0, 0];
  }

  // A drag of (dx, dy) pixels on a view `heightPixels` tall turns the view by the angle it spans.
  look(dx, dy, heightPixels) {
    const radiansPerPixel = this.fovRadians / Math.max(heightPixels, 1);
    this.lookDelta[0] -= dx * radiansPerPixel;
    this.lookDelta[1] -= dy * radiansPerPixel;
  }

  // Advances by dt seconds; true when the pose changed.
  update(dt) {
    let changed = false;
    const [yaw, pitch] = this.lookDelta;
    this.lookDelta = [0, 0];
    if (yaw !== 0 || pitch !== 0) {
      // Yaw about the world's up axis, pitch about the camera's own x axis: the horizon stays level.
      const turned = normalize(multiply(fromAxisAngle([0, 1, 0], yaw), multiply(this.orientation, fromAxisAngle([1, 0, 0], pitch))));
      if (Math.abs(rotate(turned, [0, 0, -1])[1]) < MAX_PITCH_SINE) {
        this.orientation = turned;
        changed = true;
      } else if (yaw !== 0) {
        this.orientation = normalize(multiply(fromAxisAngle([0, 1, 0], yaw), this.orientation));
        changed = true;
      }
    }
    let local = [...this.padMove];
    for (const code of this.held) local = add(local, MOVE_KEYS[code]);
    if (local[0] !== 0 || local[1] !== 0 || local[2] !== 0) {
      const step = this.unitsPerSecond * (this.fast ? 4 : 1) * Math.min(dt, 0.1);
      // x and z move in the view's frame, y along the world's up axis.
      const horizontal = rotate(this.orientation, [local[0], 0, local[2]]);
      this.position = add(this.position, scale(add(horizontal, [0, local[1], 0]), step));
      changed = true;
    }
    return changed;
  }
}
