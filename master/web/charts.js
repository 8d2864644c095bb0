// A line chart of the last minute of one or more series, drawn on a plain canvas: time runs right to
// left (now at the right edge), the vertical scale fits the largest value shown.

const WINDOW_MS = 60000;

export class TimeChart {
  // series: [{ name, color }]; unit: label suffix such as 'ms'.
  constructor(canvas, series, unit) {
    this.canvas = canvas;
    this.series = series.map((s) => ({ ...s, points: [] }));
    this.unit = unit;
  }

  add(seriesIndex, t, value) {
    if (!Number.isFinite(value)) return;
    const points = this.series[seriesIndex].points;
    points.push([t, value]);
    while (points.length && points[0][0] < t - WINDOW_MS) points.shift();
  }

  draw(now) {
    const canvas = this.canvas;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.round(canvas.clientWidth * ratio);
    const height = Math.round(canvas.clientHeight * ratio);
    if (width === 0 || height === 0) return;
    if (canvas.width !== width || canvas.height !== height) {
      canvas.width = width;
      canvas.height = height;
    }
    const g = canvas.getContext('2d');
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    const left = 40, top = 6, bottom = 16;
    g.clearRect(0, 0, w, h);
    let max = 0;
    for (const s of this.series) for (const [t, v] of s.points) if (t >= now - WINDOW_MS) max = Math.max(max, v);
    max = niceCeiling(max);
    g.font = '10px system-ui, sans-serif';
    g.fillStyle = '#8a93a3';
    g.strokeStyle = '#2a3240';
    g.lineWidth = 1;
    for (const fraction of [0, 0.5, 1]) {
      const y = top + (h - top - bottom) * (1 - fraction);
      g.beginPath();
      g.moveTo(left, y);
      g.lineTo(w, y);
      g.stroke();
      g.fillText(`${formatValue(max * fraction)}${this.unit}`, 2, y + 3);
    }
    g.fillText('-60 s', left, h - 3);
    g.fillText('now', w - 22, h - 3);
    const x = (t) => left + (w - left) * (1 - (now - t) / WINDOW_MS);
    const y = (v) => top + (h - top - bottom) * (1 - v / max);
    let legendX = left + 40;
    for (const s of this.series) {
      g.strokeStyle = s.color;
      g.lineWidth = 1.5;
      g.beginPath();
      s.points.forEach(([t, v], i) => (i === 0 ? g.moveTo(x(t), y(v)) : g.lineTo(x(t), y(v))));
      g.stroke();
      g.fillStyle = s.color;
      g.fillText(s.name, legendX, h - 3);
      legendX += g.measureText(s.name).width + 12;
    }
  }
}

function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

function formatValue(v) {
  return v >= 100 || Number.isInteger(v) ? String(Math.round(v)) : v.toFixed(1);
}
