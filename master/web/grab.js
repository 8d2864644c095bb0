// Grab and move (PROTOCOL.md "Things that move"): a pointer's ray (mouse, finger, or an XR controller's
// target ray) picks the instance it meets first: the master traces it on its copy of the scene posed at
// the clock's time (`pick` -> `picked`). The instance then follows the ray, keeping its distance from
// the ray's origin (the eye or the hand), until let go; its new transform goes to the master as `move`,
// at most one a display frame (flush).
import { add, rotate, scale, subtract } from './quaternion.js';

function unit(v) {
  const length = Math.hypot(v[0], v[1], v[2]);
  return length > 0 ? scale(v, 1 / length) : null;
}

// The ray through image point (u, v) in [0, 1]^2 of a camera at `position` looking down its -z, with a
// vertical field of view `fovRadians` and width / height `aspect`.
export function cameraRay(position, orientation, fovRadians, aspect, u, v) {
  const t = Math.tan(fovRadians / 2);
  const direction = rotate(orientation, [(2 * u - 1) * t * aspect, (1 - 2 * v) * t, -1]);
  return { origin: [...position], direction: unit(direction) };
}

// An XR target ray: its pose's position and -z axis (scene space).
export function poseRay(pose) {
  return { origin: [...pose.position], direction: unit(rotate(pose.orientation, [0, 0, -1])) };
}

export class Grab {
  // send(message): to the master (false when not connected); onEvent(text): for the dashboard.
  constructor(send, onEvent) {
    this.send = send;
    this.onEvent = onEvent;
    this.nextId = 1;
    this.pending = null;   // { id } while the master traces the pick
    this.held = null;      // { instance, distance, point, transform } once picked
    this.ray = null;       // the pointer's newest ray
    this.outgoing = null;  // the transform not yet sent
  }

  get active() {
    return this.pending !== null || this.held !== null;
  }

  begin(ray) {
    if (!ray.direction) return;
    const id = this.nextId++;
    this.ray = ray;
    this.held = null;
    this.outgoing = null;
    if (this.send({ type: 'pick', id, origin: ray.origin, direction: ray.direction })) this.pending = { id };
  }

  // The master's answer (`picked`): the instance under the pointer, or nothing.
  picked(message) {
    if (!this.pending || message.id !== this.pending.id) return;
    this.pending = null;
    if (!Number.isInteger(message.instance)) {
      this.onEvent?.('nothing to grab there');
      return;
    }
    this.held = { instance: message.instance, distance: message.distance, point: message.point, transform: message.transform };
    this.onEvent?.(`grabbed instance ${message.instance}`);
    if (this.ray) this.move(this.ray);
  }

  // The pointer moved: the grabbed point goes to the same distance along the new ray.
  move(ray) {
    this.ray = ray;
    if (!this.held || !ray.direction) return;
    const { point, transform, distance } = this.held;
    const delta = subtract(add(ray.origin, scale(ray.direction, distance)), point);
    const moved = [...transform];
    moved[3] += delta[0];
    moved[7] += delta[1];
    moved[11] += delta[2];
    this.outgoing = moved;
  }

  // Once a display frame: the newest transform to the master.
  flush() {
    if (!this.held || !this.outgoing) return;
    if (this.send({ type: 'move', instance: this.held.instance, transform: this.outgoing })) this.outgoing = null;
  }

  end() {
    this.flush();
    this.pending = null;
    this.held = null;
    this.ray = null;
  }
}
