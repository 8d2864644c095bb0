"""Line plots as SVG, written with the standard library only (deploy/soak's memory and latency over
time): series of (x, y) points, shaded x spans (faults), axes with round ticks, a legend."""
import html
import math

COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def nice_ticks(lo, hi, count=6):
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / count
    step = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * step:
            step *= m
            break
    first = math.floor(lo / step) * step
    ticks, v = [], first
    while v <= hi + step * 1e-9:
        ticks.append(round(v, 10))
        v += step
    return ticks


def line_plot(path, title, x_label, y_label, series, spans=(), width=1000, height=360):
    """series: [(name, [(x, y), ...])]; spans: [(x0, x1, label)] shaded behind the lines."""
    left, right, top, bottom = 70, 20, 40, 50
    points = [p for _, pts in series for p in pts if p[1] is not None]
    xs = [p[0] for p in points] + [s[1] for s in spans]
    x_max = max(xs) if xs else 1.0
    y_max = max([p[1] for p in points], default=1.0) * 1.1 or 1.0
    x_ticks, y_ticks = nice_ticks(0, x_max), nice_ticks(0, y_max)
    x_max, y_max = max(x_max, x_ticks[-1]), max(y_max, y_ticks[-1])
    pw, ph = width - left - right, height - top - bottom

    def sx(x):
        return left + pw * x / x_max

    def sy(y):
        return top + ph * (1 - y / y_max)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="14">{html.escape(title)}</text>']
    for x0, x1, label in spans:
        out.append(f'<rect x="{sx(x0):.1f}" y="{top}" width="{max(1.0, sx(x1) - sx(x0)):.1f}" height="{ph}" fill="#f4c7c3" '
                   f'opacity="0.6"><title>{html.escape(label)}</title></rect>')
        out.append(f'<text x="{sx(x0):.1f}" y="{top + 10}" font-size="9" fill="#a33">{html.escape(label)}</text>')
    for t in x_ticks:
        out.append(f'<line x1="{sx(t):.1f}" y1="{top}" x2="{sx(t):.1f}" y2="{top + ph}" stroke="#eee"/>')
        out.append(f'<text x="{sx(t):.1f}" y="{top + ph + 16}" text-anchor="middle">{t:g}</text>')
    for t in y_ticks:
        out.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{left + pw}" y2="{sy(t):.1f}" stroke="#eee"/>')
        out.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end">{t:g}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    out.append(f'<text x="{left + pw / 2}" y="{height - 10}" text-anchor="middle">{html.escape(x_label)}</text>')
    out.append(f'<text x="16" y="{top + ph / 2}" text-anchor="middle" transform="rotate(-90 16 {top + ph / 2})">'
               f'{html.escape(y_label)}</text>')
    for i, (name, pts) in enumerate(series):
        colour = COLOURS[i % len(COLOURS)]
        runs, run = [], []
        for x, y in pts:  # a gap (None) breaks the line: a process that was not running
            if y is None:
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(f"{sx(x):.1f},{sy(y):.1f}")
        if run:
            runs.append(run)
        for r in runs:
            out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.3" points="{" ".join(r)}"/>')
        out.append(f'<rect x="{left + 10 + 170 * i}" y="{top + 16}" width="12" height="3" fill="{colour}"/>')
        out.append(f'<text x="{left + 26 + 170 * i}" y="{top + 21}">{html.escape(name)}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
