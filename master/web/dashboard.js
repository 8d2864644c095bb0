// The dashboard beside the live view: settings form, workers table, tile-ownership overlay and legend,
// and the event list.

const PALETTE = ['#e6194b', '#3cb44b', '#4363d8', '#f58231', '#911eb4', '#42d4f4', '#f032e6', '#bfef45'];
const MAX_EVENTS = 200;

export function workerColor(index) {
  if (index < 0) return '#808080';
  if (index < PALETTE.length) return PALETTE[index];
  return `hsl(${(index * 137.5) % 360}, 70%, 55%)`;
}

export class Dashboard {
  // onSettings(partialSettings) is called when the user changes a setting.
  constructor(onSettings) {
    this.form = document.getElementById('settings');
    this.workersBody = document.querySelector('#workers tbody');
    this.events = document.getElementById('events');
    this.legend = document.getElementById('legend');
    this.masterStatus = document.getElementById('master-status');
    this.pageLink = document.getElementById('page-link');
    this.streamStatus = document.getElementById('stream-status');
    this.masterStream = '';   // the driving page's stream as the master reports it
    this.workerNames = [];
    this.form.addEventListener('submit', (event) => event.preventDefault());
    this.form.addEventListener('change', (event) => {
      const settings = this.readField(event.target);
      if (settings) onSettings(settings);
    });
  }

  readField(field) {
    const value = field.value;
    switch (field.name) {
      case 'mode':
      case 'schedule':
        return { [field.name]: value };
      case 'spp':
      case 'preset':
      case 'tile': {
        const n = Number(value);
        return Number.isInteger(n) && n > 0 ? { [field.name]: n } : null;
      }
      case 'size': {
        const match = /^(\d+)x(\d+)$/.exec(value.trim());
        return match ? { size: [Number(match[1]), Number(match[2])] } : null;
      }
      case 'stereo':
        return { stereo: field.checked };
      default:
        return null;
    }
  }

  // From a session message: the current settings, and whether this page may change them.
  showSession(session) {
    const s = session.settings || {};
    const f = this.form.elements;
    if (s.mode) f.mode.value = s.mode;
    if (s.spp) f.spp.value = s.spp;
    if (s.preset) f.preset.value = String(s.preset);
    if (s.tile) f.tile.value = s.tile;
    if (s.schedule) f.schedule.value = s.schedule;
    if (session.size) f.size.value = `${session.size[0]}x${session.size[1]}`;
    f.stereo.checked = !!session.stereo;
    const driving = session.role === 'drive';
    for (const name of ['mode', 'spp', 'preset', 'tile', 'schedule', 'size', 'stereo']) f[name].disabled = !driving;
  }

  showStatus(status) {
    const workers = status.workers || [];
    this.workerNames = workers.map((w) => w.name);
    this.workersBody.replaceChildren(...workers.map((w, i) => {
      const row = document.createElement('tr');
      row.className = `state-${w.state}`;
      const cells = [w.name, w.scene_memory ? `${w.device} (${w.scene_memory} scene memory)` : w.device, w.state, formatNumber(w.tiles_per_s), formatNumber(w.busy_pct), w.scene];
      cells.forEach((text, column) => {
        const cell = document.createElement('td');
        if (column === 0) {
          const swatch = document.createElement('span');
          swatch.className = 'swatch';
          swatch.style.background = workerColor(i);
          cell.append(swatch);
        }
        cell.append(text ?? '');
        cell.title = String(text ?? '');  // the whole text where the column cuts it short
        row.append(cell);
      });
      return row;
    }));
    const latency = status.latency_ms || {};
    const page = status.page_ms || {};
    this.masterStatus.textContent = `master: ${formatNumber(status.fps)} fps, ${status.frames ?? 0} frames, ` +
      `pose→photon median ${formatNumber(latency.median)} ms, p95 ${formatNumber(latency.p95)} ms; ` +
      `driving page (medians): send→receive ${formatNumber(page.network)} ms, decode ${formatNumber(page.decode)} ms, ` +
      `draw ${formatNumber(page.draw)} ms`;
    const aux = status.aux;
    const parts = [];
    if (Number.isFinite(status.page_mbit_s)) parts.push(`master → pages link ${formatNumber(status.page_mbit_s)} Mbit/s (all pages)`);
    if (aux && (aux.depth_bytes > 0 || aux.alpha_bytes > 0)) {
      const sections = [['depth', aux.depth_bytes], ['alpha', aux.alpha_bytes]].filter(([, bytes]) => bytes > 0)
        .map(([name, bytes]) => `${name} ${formatBytes(bytes)}`);
      parts.push(`${sections.join(', ')} a frame, compressed in ${formatNumber(aux.ms)} ms`);
    }
    this.pageLink.textContent = parts.join('; ');
    const stream = status.stream;
    // The master's figures are of video streams; of a JPEG stream it names the codec only.
    if (!stream) this.masterStream = '';
    else if (stream.codec === 'jpeg') this.masterStream = "driving page's stream (master): jpeg";
    else {
      this.masterStream = `driving page's stream (master): ${stream.codec}, ${formatNumber(stream.mbit_s)} Mbit/s of ` +
        `${formatNumber(stream.bitrate_mbit)} target, encode ${formatNumber(stream.encode_ms)} ms, scale ${formatScale(stream.scale)}, ` +
        `${stream.key_frames ?? 0} key frames`;
    }
  }

  // This page's stream (StreamStats.summary()) and the master's figures for the driving page's;
  // `keyRequests`: key frames this page asked for.
  showStream(summary, keyRequests) {
    const target = Number.isFinite(summary.targetMbit) ? ` of ${formatNumber(summary.targetMbit)} target` : '';
    const own = `this page's stream: ${summary.codec}, ${formatNumber(summary.mbitPerS)} Mbit/s${target}, ` +
      `encode ${formatNumber(summary.encodeMs)} ms, decode ${formatNumber(summary.decodeMs)} ms, ` +
      `draw ${formatNumber(summary.drawMs)} ms, scale ${formatScale(summary.scale)}` +
      (keyRequests ? `, ${keyRequests} key frames asked for` : '');
    this.streamStatus.textContent = [own, this.masterStream].filter(Boolean).join('; ');
  }

  // The master's QR code of this page's address, for a headset's camera; hidden where it serves none.
  async showQrCode(token) {
    const figure = document.getElementById('qr');
    try {
      const response = await fetch(`/qr.svg?token=${encodeURIComponent(token)}`, { cache: 'no-store' });
      if (!response.ok) throw new Error(String(response.status));
      const svg = await response.blob();
      document.getElementById('qr-image').src = URL.createObjectURL(svg);
      figure.hidden = false;
    } catch {
      figure.hidden = true;
    }
  }

  // `text` with the page's local time; `kind` styles it (event, local, error).
  addEvent(text, kind = 'event') {
    const item = document.createElement('li');
    item.className = kind;
    item.textContent = `${new Date().toLocaleTimeString()}  ${text}`;
    this.events.prepend(item);
    while (this.events.children.length > MAX_EVENTS) this.events.lastChild.remove();
  }

  // Tile owners of a frame, drawn on `canvas` (laid over the frame canvas, same box) at twice the
  // image's resolution so tile borders stay crisp.
  drawOverlay(canvas, header, imageWidth, imageHeight) {
    const k = 2;
    if (canvas.width !== imageWidth * k || canvas.height !== imageHeight * k) {
      canvas.width = imageWidth * k;
      canvas.height = imageHeight * k;
    }
    const g = canvas.getContext('2d');
    g.setTransform(k, 0, 0, k, 0, 0);
    g.clearRect(0, 0, imageWidth, imageHeight);
    const owners = header.owners;
    const tile = header.tile;
    const eyes = header.eyes || 1;
    if (!Array.isArray(owners) || !(tile > 0)) return;
    const eyeWidth = imageWidth / eyes;
    const columns = Math.ceil(eyeWidth / tile);
    const rows = Math.ceil(imageHeight / tile);
    g.lineWidth = 1 / k;
    const used = new Set();
    for (let eye = 0; eye < eyes; ++eye) {
      for (let row = 0; row < rows; ++row) {
        for (let column = 0; column < columns; ++column) {
          const owner = owners[(eye * rows + row) * columns + column];
          if (owner === undefined) continue;
          used.add(owner);
          const x = eye * eyeWidth + column * tile;
          const y = row * tile;
          const w = Math.min(tile, eyeWidth - column * tile);
          const h = Math.min(tile, imageHeight - row * tile);
          g.globalAlpha = 0.3;
          g.fillStyle = workerColor(owner);
          g.fillRect(x, y, w, h);
          g.globalAlpha = 0.9;
          g.strokeStyle = workerColor(owner);
          g.strokeRect(x + 0.5, y + 0.5, w - 1, h - 1);
        }
      }
    }
    g.globalAlpha = 1;
    this.showLegend([...used].sort((a, b) => a - b));
  }

  showLegend(owners) {
    this.legend.replaceChildren(...owners.map((owner) => {
      const item = document.createElement('span');
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = workerColor(owner);
      item.append(swatch, this.workerNames[owner] ?? `worker ${owner}`);
      return item;
    }));
  }

  hideLegend() {
    this.legend.replaceChildren();
  }
}

function formatBytes(value) {
  if (!Number.isFinite(value)) return '-';
  return value >= 1e6 ? `${(value / 1e6).toFixed(2)} MB` : value >= 1e3 ? `${(value / 1e3).toFixed(1)} kB` : `${value} B`;
}

function formatScale(value) {
  return Number.isFinite(value) ? String(Math.round(value * 100) / 100) : '-';
}

function formatNumber(value) {
  if (!Number.isFinite(value)) return '-';
  return Math.abs(value) >= 100 ? String(Math.round(value)) : value.toFixed(1);
}
