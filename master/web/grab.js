// Grab and move (PROTOCOL.md "Things that move"): a pointer's ray (mouse, finger, or an XR controller's
// target ray) picks the instance it meets first: the master traces it on its copy of the scene posed at
// the clock's time (`pick` -> `picked`). The instance then follows the pointer until let go: a mouse or
// finger ray carries the grabbed point at the distance it was picked at (the object keeps its distance
// from the eye); an XR controller carries the object as the hand holds it, turning with the hand's
// pose as well (rigidly, from the hand's pose when the pick went out, so nothing jumps at grab start).
// Its new transform goes to the master as `move`, at most one a display frame (flush).
import { add, conjugate, multiply, rotate, scale, subtract } from './quaternion.js';

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

// `transform` (object to world, 3x4 rows) carried by a hand that moved from pose `from` to pose `to`
// (scene space): to . from^-1 . transform.
export function carried(transform, from, to) {
  const turn = multiply(to.orientation, conjugate(from.orientation));
  const out = new Array(12);
  for (let column = 0; column < 3; ++column) {
    const axis = rotate(turn, [transform[column], transform[4 + column], transform[8 + column]]);
    for (let row = 0; row < 3; ++row) out[4 * row + column] = axis[row];
  }
  const origin = add(rotate(turn, subtract([transform[3], transform[7], transform[11]], from.position)), to.position);
  for (let row = 0; row < 3; ++row) out[4 * row + 3] = origin[row];
  return out;
}

export class Grab {
  // send(message): to the master (false when not connected); onEvent(text): for the dashboard.
  constructor(send, onEvent) {
    this.send = send;
    this.onEvent = onEvent;
    this.nextId = 1;
    this.pending = null;   // { id, hand } while the master traces the pick
    this.held = null;      // { instance, distance, point, transform, hand } once picked
    this.ray = null;       // the pointer's newest ray
    this.hand = null;      // an XR controller's newest pose (scene space), when one grabs
    this.outgoing = null;  // the transform not yet sent
  }

  get active() {
    return this.pending !== null || this.held !== null;
  }

  // `hand`: the XR controller's pose whose target ray `ray` is ({ position, orientation }, scene space).
  begin(ray, hand = null) {
    if (!ray.direction) return;
    const id = this.nextId++;
    this.ray = ray;
    this.hand = hand;
    this.held = null;
    this.outgoing = null;
    if (this.send({ type: 'pick', id, origin: ray.origin, direction: ray.direction })) this.pending = { id, hand };
  }

  // The master's answer (`picked`): the instance under the pointer, or nothing.
  picked(message) {
    if (!this.pending || message.id !== this.pending.id) return;
    const { hand } = this.pending;
    this.pending = null;
    if (!Number.isInteger(message.instance)) {
      this.onEvent?.('nothing to grab there');
      return;
    }
    this.held = { instance: message.instance, distance: message.distance, point: message.point, transform: message.transform, hand };
    this.onEvent?.(`grabbed instance ${message.instance}`);
    if (this.ray) this.move(this.ray, this.hand);
  }

  // The pointer moved: a hand carries the object as it holds it; a ray takes the grabbed point to the
  // same distance along it.
  move(ray, hand = null) {
    this.ray = ray;
    this.hand = hand;
    if (!this.held) return;
    if (this.held.hand && hand) {
      this.outgoing = carried(this.held.transform, this.held.hand, hand);
      return;
    }
    if (!ray.direction) return;
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
    this.hand = null;
  }
}
