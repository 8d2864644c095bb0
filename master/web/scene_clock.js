// The dashboard's scene clock (PROTOCOL.md "Things that move"): shows the time the master renders
// at (from `clock` and `status` messages) and lets the driving page play, pause and seek it.
const $ = (id) => document.getElementById(id);

export class ClockControl {
  // send(message): to the master (false when not connected).
  constructor(send) {
    this.send = send;
    this.clock = null;
    this.seeking = false;  // the slider is held: status updates do not move it
    $('clock-play').addEventListener('click', () => {
      if (this.clock) this.send({ type: 'clock', playing: !this.clock.playing });
    });
    const seek = $('clock-seek');
    seek.addEventListener('input', () => {
      this.seeking = true;
      $('clock-time').textContent = `${Number(seek.value).toFixed(2)} s`;
    });
    seek.addEventListener('change', () => {
      this.seeking = false;
      this.send({ type: 'clock', time: Number(seek.value) });
    });
  }

  // A `clock` object (session, status and clock messages).
  show(clock) {
    if (!clock) return;
    this.clock = clock;
    $('scene-clock').hidden = false;
    $('clock-play').textContent = clock.playing ? 'pause' : 'play';
    $('clock-play').disabled = !(clock.scale > 0) && !clock.playing;
    const seek = $('clock-seek');
    // One loop of the longest animation (they loop), else a minute.
    seek.max = String(clock.duration > 0 ? clock.duration : 60);
    if (this.seeking) return;
    const shown = clock.duration > 0 ? ((clock.time % clock.duration) + clock.duration) % clock.duration : clock.time;
    seek.value = String(shown);
    $('clock-time').textContent = `${clock.time.toFixed(2)} s${clock.animated ? '' : ' (nothing animated)'}`;
  }
}
