"""deploy/soak's results: the CSV files, the plots and the verdict against the thresholds."""
import csv
import json
import shutil
import statistics
import subprocess
from pathlib import Path


def percentile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * q))]


def read_frames(out, t0_unix_ms):
    """Every frame the page drew: (soak time s, connection, frame, pose_id, latency_ms or None, client run)."""
    frames = []
    for path in sorted(out.glob("frames-*.csv"), key=lambda p: int(p.stem.split("-")[1])):
        run = int(path.stem.split("-")[1])
        with open(path) as f:
            for r in csv.DictReader(f):
                frames.append({"t": (float(r["unix_ms"]) - t0_unix_ms) / 1000.0, "run": run, "connection": int(r["connection"]),
                               "frame": int(r["frame"]), "pose_id": int(r["pose_id"]), "samples": int(r["samples"]),
                               "latency_ms": float(r["latency_ms"]) if r["latency_ms"] else None})
    return frames


def master_frames(out):
    """(opened, lost frames with their notes, tiles reissued) over every master run's stats."""
    opened, lost, reissued = 0, [], 0
    for path in sorted(out.glob("master-*-stats.json")):
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        for r in data.get("frames", []):
            opened += 1
            reissued += int(r.get("reissued", 0))
            if not r.get("complete") and not r.get("superseded"):
                lost.append({"run": path.name, "frame_id": r.get("frame_id"), "note": r.get("note", "")})
    return opened, lost, reissued


def in_fault(t, faults, recovery):
    return any(f["start"] <= t <= f["end"] + recovery for f in faults)


def median_between(rows, key, lo, hi):
    v = [r[key] for r in rows if lo <= r["t"] <= hi and r[key] != ""]
    return statistics.median(v) if v else None


def make_report(soak):
    a, out, rows, faults, recovery = soak.a, soak.out, soak.rows, soak.faults, soak.recovery_s
    t0_unix_ms = soak.t0_unix_ms
    frames = read_frames(out, t0_unix_ms)
    opened, lost, reissued = master_frames(out)

    # Drawn out of order or twice: within one connection the master's frame numbers only rise.
    disorder, duplicates, last = 0, 0, {}
    for f in frames:
        key = (f["run"], f["connection"])
        if key in last:
            if f["frame"] == last[key]:
                duplicates += 1
            elif f["frame"] < last[key]:
                disorder += 1
        last[key] = f["frame"]

    latencies = [(f["t"], f["latency_ms"]) for f in frames if f["latency_ms"] is not None]
    base = [l for t, l in latencies if 5 <= t <= a.baseline]
    calm = [l for t, l in latencies if t > a.baseline and not in_fault(t, faults, recovery)]
    late = sum(1 for _, l in latencies if l > 1000)
    base_p99, calm_p99 = percentile(base, 0.99), percentile(calm, 0.99)

    warm_end = min(300.0, a.duration / 4)
    end = rows[-1]["t"] if rows else 0
    checks = []

    def check(name, ok, text):
        checks.append({"check": name, "pass": bool(ok), "detail": text})

    check("frames lost", not lost, f"{len(lost)} of {opened} frames the master opened were neither completed nor superseded")
    check("frames out of order", disorder == 0, f"{disorder} drawn after a newer one")
    check("frames duplicated", duplicates == 0, f"{duplicates} drawn twice")
    for key, label in (("master_rss_mb", "master RSS"), ("worker_rss_mb_max", "largest worker RSS")):
        before = median_between(rows, key, warm_end - 10, warm_end)
        after = median_between(rows, key, end - 10, end)
        if before and after:
            growth = 100.0 * (after - before) / before
            check(f"{label} growth", growth <= a.max_rss_growth,
                  f"{before:.1f} MB at {warm_end:.0f} s -> {after:.1f} MB at the end: {growth:+.1f} % (limit {a.max_rss_growth:g} %)")
        else:
            check(f"{label} growth", False, "not measured (the process was not running at both ends)")
    for key, label in (("master_fds", "master file descriptors"), ("master_threads", "master threads"),
                       ("worker_fds_max", "worker file descriptors"), ("worker_threads_max", "worker threads")):
        early = [r[key] for r in rows if warm_end - 30 <= r["t"] <= warm_end and r[key] != "" and not in_fault(r["t"], faults, recovery)]
        late_rows = [r[key] for r in rows if r["t"] >= end * 0.75 and r[key] != "" and not in_fault(r["t"], faults, recovery)]
        if early and late_rows:
            check(f"{label} flat", max(late_rows) <= max(early) + 2,
                  f"largest {max(early)} before {warm_end:.0f} s, {max(late_rows)} in the last quarter (outside faults)")
        else:
            check(f"{label} flat", False, "not measured (no calm second in the windows)")
    if base_p99 is not None and calm_p99 is not None:
        check("p99 latency outside faults", calm_p99 <= a.max_p99_factor * base_p99,
              f"{calm_p99:.1f} ms against the baseline's {base_p99:.1f} ms (limit {a.max_p99_factor:g}x)")
    else:
        check("p99 latency outside faults", False, "not measured (no frames in the baseline or outside faults)")
    check("faults injected", len(faults) > 0 or a.duration <= a.baseline + 10, f"{len(faults)} faults")

    # Files: one row a second, the faults, the frames; plots where gnuplot is.
    if rows:
        with open(out / "soak.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
    with open(out / "faults.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["start_s", "end_s", "kind", "target"])
        for x in faults:
            w.writerow([f"{x['start']:.2f}", f"{x['end']:.2f}", x["kind"], x["target"]])
    with open(out / "latency.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "latency_ms"])
        for t, l in latencies:
            w.writerow([f"{t:.3f}", f"{l:.2f}"])
    plot(out, faults)

    summary = {
        "duration_s": a.duration, "baseline_s": a.baseline, "workers": a.workers, "fault_every_s": a.fault_every,
        "links_emulated": soak.links.enabled, "faults": len(faults),
        "frames_opened": opened, "frames_drawn": len(frames), "frames_lost": len(lost), "frames_out_of_order": disorder,
        "frames_duplicated": duplicates, "frames_late_over_1s": late, "tiles_reissued": reissued,
        "page_connections": len({(f["run"], f["connection"]) for f in frames}),
        "latency_ms": {"baseline_p50": percentile(base, 0.5), "baseline_p99": base_p99,
                       "calm_p50": percentile(calm, 0.5), "calm_p99": calm_p99,
                       "all_p99": percentile([l for _, l in latencies], 0.99)},
        "checks": checks, "pass": all(c["pass"] for c in checks), "out": str(out)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        print(f"soak: {a.duration:.0f} s, {a.workers} workers, {len(faults)} faults; {len(frames)} frames drawn, "
              f"{opened} opened, {reissued} tiles reissued")
        for c in checks:
            print(f"  {'PASS' if c['pass'] else 'FAIL'}  {c['check']:<30} {c['detail']}")
        print(f"soak: {'PASS' if summary['pass'] else 'FAIL'} (soak.csv, faults.csv, latency.csv, plots in {out})")
    return 0 if summary["pass"] else 1


def plot(out, faults):
    if not shutil.which("gnuplot") or not (out / "soak.csv").exists():
        return
    marks = "".join(f"set arrow from {x['start']:.1f}, graph 0 to {x['start']:.1f}, graph 1 nohead lc rgb '#cc4444' dt 2\n"
                    for x in faults)
    script = f"""set datafile separator ','
set terminal pngcairo size 1100,420
set key top left
set xlabel 'time (s); dashed: faults'
{marks}
set output '{out}/memory.png'
set ylabel 'RSS (MB)'
plot '{out}/soak.csv' using 1:2 skip 1 with lines title 'master', '' using 1:5 skip 1 with lines title 'largest worker'
set output '{out}/latency.png'
set ylabel 'pose -> frame (ms)'
set logscale y
plot '{out}/latency.csv' using 1:2 skip 1 with dots title 'each new pose''s frame'
"""
    subprocess.run(["gnuplot"], input=script, text=True, capture_output=True)
