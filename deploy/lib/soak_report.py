"""deploy/soak's results: the per-second rows completed from the page's frames and the master's
statistics, the verdict against the thresholds (docs/soak.md), the CSV files, the table, the plots."""
import csv
import json
import statistics
from pathlib import Path

from svg_plot import line_plot

LATE_MS = 1000.0  # a frame shown more than this after its pose is late


def percentile(values, q):
    if not values:
        return None
    v = sorted(values)
    return v[min(len(v) - 1, int(len(v) * q))]


def read_frames(out, t0_unix_ms):
    """Every frame the page showed: soak time (s), connection, frame, pose id, latency (ms, or None)."""
    frames = []
    for path in sorted(Path(out).glob("frames-*.csv")):
        with open(path) as f:
            for r in csv.DictReader(f):
                try:
                    frames.append({"t": (float(r["unix_ms"]) - t0_unix_ms) / 1000.0, "connection": (path.name, int(r["connection"])),
                                   "frame": int(r["frame"]), "pose_id": int(r["pose_id"]),
                                   "latency_ms": float(r["latency_ms"]) if r["latency_ms"] else None})
                except (KeyError, ValueError):
                    continue  # a row cut short when the page was stopped
    return frames


def master_frames(out, master_starts):
    """From each master run's statistics: (frames opened, frames dropped unfinished, [(soak time, tiles reissued)])."""
    opened, dropped, reissued = 0, 0, []
    for run, start in enumerate(master_starts, 1):
        path = Path(out) / f"master-{run}-stats.json"
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        summary = data.get("summary", {})
        opened += summary.get("frames_complete", 0) + summary.get("frames_failed", 0) + summary.get("frames_superseded", 0)
        dropped += summary.get("frames_failed", 0)
        for r in data.get("frames", []):
            if r.get("reissued"):
                reissued.append((start + float(r.get("completed_s") or 0), int(r["reissued"])))
    return opened, dropped, reissued


def windows_of(faults, recovery):
    return [(f["start"], (f["end"] if f["end"] is not None else f["start"]) + recovery) for f in faults]


def in_any(t, windows):
    return any(a <= t <= b for a, b in windows)


def median_between(rows, key, lo, hi):
    v = [r[key] for r in rows if lo <= r["t"] <= hi and r.get(key) not in ("", None)]
    return statistics.median(v) if v else None


def add_frame_columns(rows, frames, reissued):
    """Per second: frames shown, latency p50/p99, late, out of order, duplicated, tiles reissued."""
    by_second = {}
    last = {}
    for f in frames:
        s = by_second.setdefault(int(f["t"]), {"n": 0, "lat": [], "late": 0, "disorder": 0, "dup": 0})
        s["n"] += 1
        if f["latency_ms"] is not None:
            s["lat"].append(f["latency_ms"])
            s["late"] += f["latency_ms"] > LATE_MS
        prev = last.get(f["connection"])
        if prev is not None:
            s["dup"] += f["frame"] == prev
            s["disorder"] += f["frame"] < prev
        last[f["connection"]] = f["frame"]
    tiles = {}
    for t, n in reissued:
        tiles[int(t)] = tiles.get(int(t), 0) + n
    for r in rows:
        s = by_second.get(int(r["t"]), {"n": 0, "lat": [], "late": 0, "disorder": 0, "dup": 0})
        p50, p99 = percentile(s["lat"], 0.5), percentile(s["lat"], 0.99)
        r.update({"frames": s["n"], "latency_p50_ms": "" if p50 is None else round(p50, 1),
                  "latency_p99_ms": "" if p99 is None else round(p99, 1), "frames_late": s["late"],
                  "frames_out_of_order": s["disorder"], "frames_duplicated": s["dup"], "tiles_reissued": tiles.get(int(r["t"]), 0)})
    return sum(s["disorder"] for s in by_second.values()), sum(s["dup"] for s in by_second.values())


def worker_keys(rows, what):
    return sorted({k for r in rows for k in r if k.startswith("w") and k.endswith("_" + what)}, key=lambda k: int(k[1:].split("_")[0]))


def resource_checks(a, rows, faults, recovery, master_starts, check):
    """RSS growth, file descriptors and threads flat: the master per run, the workers per worker
    (a killed and restarted worker counts from its restart)."""
    end = rows[-1]["t"] if rows else 0.0
    warm = min(300.0, a.duration / 4)
    calm = windows_of(faults, recovery)
    # Each process's life: (label, key prefix, start, end).
    lives = []
    bounds = master_starts + [end + 1]
    for run in range(len(master_starts)):
        lives.append((f"master{'' if len(master_starts) == 1 else f' (run {run + 1})'}", "master", bounds[run], bounds[run + 1] - 1))
    restarts = {}
    for f in faults:
        if f["kind"] in ("kill", "worker-exit"):
            restarts.setdefault(f["target"], []).append(f["end"] or f["start"])
    for key in worker_keys(rows, "rss_mb"):
        k = int(key[1:].split("_")[0])
        starts = [0.0] + restarts.get(f"worker-{k}", []) + [end + 1]
        longest = max(range(len(starts) - 1), key=lambda i: starts[i + 1] - starts[i])
        lives.append((f"worker {k}", f"w{k}", starts[longest], starts[longest + 1] - 1))
    worst = {"rss": None, "fds": None, "threads": None}
    for label, prefix, lo, hi in lives:
        if hi - lo < warm + 20:
            continue  # too short to tell growth from warm-up
        warm_end = lo + warm
        before = median_between(rows, f"{prefix}_rss_mb", warm_end - 10, warm_end)
        after = median_between(rows, f"{prefix}_rss_mb", hi - 10, hi)
        if before and after:
            growth = 100.0 * (after - before) / before
            if worst["rss"] is None or growth > worst["rss"][0]:
                worst["rss"] = (growth, f"{label}: {before:.1f} MB at {warm_end:.0f} s -> {after:.1f} MB at {hi:.0f} s")
            if prefix == "master":
                check(f"{label} RSS growth", growth <= a.max_rss_growth,
                      f"{before:.1f} MB at {warm_end:.0f} s -> {after:.1f} MB at {hi:.0f} s: {growth:+.1f} % (limit {a.max_rss_growth:g} %)")
        for what in ("fds", "threads"):
            key = f"{prefix}_{what}"
            early = [r[key] for r in rows if warm_end - 30 <= r["t"] <= warm_end and r.get(key) != "" and not in_any(r["t"], calm)]
            late = [r[key] for r in rows if max(warm_end, hi - (hi - lo) / 4) <= r["t"] <= hi and r.get(key) != ""
                    and not in_any(r["t"], calm)]
            if early and late:
                excess = max(late) - max(early)
                text = f"{label}: largest {max(early)} around {warm_end:.0f} s, {max(late)} at the end (outside faults)"
                if prefix == "master":
                    check(f"{label} {'file descriptors' if what == 'fds' else 'threads'} flat", excess <= 2, text)
                elif worst[what] is None or excess > worst[what][0]:
                    worst[what] = (excess, text)
    if worst["rss"] is not None:
        growth, text = worst["rss"]
        check("largest RSS growth (master, workers)", growth <= a.max_rss_growth, f"{text}: {growth:+.1f} % (limit {a.max_rss_growth:g} %)")
    else:
        check("RSS growth", False, "not measured: no process lived past the warm-up")
    for what, name in (("fds", "worker file descriptors flat"), ("threads", "worker threads flat")):
        if worst[what] is None:
            check(name, False, "not measured: no calm second in the windows")
        else:
            check(name, worst[what][0] <= 2, worst[what][1])


def make_report(soak):
    a, out, rows, faults = soak.a, Path(soak.out), soak.rows, soak.faults
    recovery = a.recovery
    frames = read_frames(out, soak.t0_unix_ms)
    opened, dropped, reissued = master_frames(out, soak.master_starts)
    disorder, duplicates = add_frame_columns(rows, frames, reissued)
    dropped_live = sum(r.get("master_frames_dropped", 0) for r in rows)
    calm = windows_of(faults, recovery)
    latencies = [(f["t"], f["latency_ms"]) for f in frames if f["latency_ms"] is not None]
    base = [x for t, x in latencies if 5 <= t <= a.baseline]
    quiet = [x for t, x in latencies if t > a.baseline and not in_any(t, calm)]
    late = sum(1 for _, x in latencies if x > LATE_MS)
    base_p99, quiet_p99 = percentile(base, 0.99), percentile(quiet, 0.99)
    client = {}
    try:
        client = json.loads((out / "client.json").read_text() or "{}")
    except (OSError, ValueError):
        pass
    checks = []

    def check(name, ok, text):
        checks.append({"check": name, "pass": bool(ok), "detail": text})

    lost = max(dropped, dropped_live)
    check("frames lost", lost == 0, f"{lost} of {opened} frames the master opened were dropped unfinished (not for a newer one)")
    check("frames out of order", disorder == 0, f"{disorder} shown after a newer one of the same connection")
    check("frames duplicated", duplicates == 0, f"{duplicates} shown twice")
    resource_checks(a, rows, faults, recovery, soak.master_starts, check)
    if base_p99 is not None and quiet_p99 is not None:
        check("p99 latency outside faults", quiet_p99 <= a.max_p99_factor * base_p99,
              f"{quiet_p99:.1f} ms over {len(quiet)} poses against the baseline's {base_p99:.1f} ms over {len(base)} "
              f"(limit {a.max_p99_factor:g}x)")
    else:
        check("p99 latency outside faults", False, "not measured: no frames in the baseline or outside faults")
    kinds = sorted({f["kind"] for f in faults})
    check("faults injected", bool(faults), f"{len(faults)}: " + ", ".join(f"{k} {sum(f['kind'] == k for f in faults)}" for k in kinds))
    check("page kept going", frames and frames[-1]["t"] > a.duration - 10,
          f"last frame at {frames[-1]['t']:.0f} s of {a.duration:.0f}; {client.get('reconnects', '?')} reconnects" if frames
          else "no frame shown")

    write_files(out, rows, faults, latencies)
    plot(out, rows, faults)
    table = window_table(rows, faults, a.duration)
    summary = {
        "duration_s": a.duration, "baseline_s": a.baseline, "workers": a.workers, "fault_every_s": a.fault_every,
        "links": soak.links.way, "links_note": soak.links_note, "faults": len(faults),
        "frames_opened": opened, "frames_shown": len(frames), "frames_lost": lost, "frames_out_of_order": disorder,
        "frames_duplicated": duplicates, "frames_late": late, "tiles_reissued": sum(n for _, n in reissued),
        "page_reconnects": client.get("reconnects"), "master_runs": len(soak.master_starts),
        "latency_ms": {"baseline_p50": percentile(base, 0.5), "baseline_p99": base_p99, "outside_faults_p50": percentile(quiet, 0.5),
                       "outside_faults_p99": quiet_p99, "all_p99": percentile([x for _, x in latencies], 0.99)},
        "checks": checks, "table": table, "pass": all(c["pass"] for c in checks), "out": str(out)}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    if a.json:
        print(json.dumps(summary, indent=2))
    else:
        print_table(table)
        print(f"\nsoak: {a.duration:.0f} s, {a.workers} workers, links {soak.links_note}; {len(faults)} faults; {len(frames)} frames "
              f"shown of {opened} the master opened, {late} late (> {LATE_MS:.0f} ms), {summary['tiles_reissued']} tiles reissued, "
              f"{client.get('reconnects', '?')} page reconnects")
        for c in checks:
            print(f"  {'PASS' if c['pass'] else 'FAIL'}  {c['check']:<42} {c['detail']}")
        print(f"soak: {'PASS' if summary['pass'] else 'FAIL'} (soak.csv, faults.csv, latency.csv, memory.svg, latency.svg in {out})")
    return 0 if summary["pass"] else 1


def write_files(out, rows, faults, latencies):
    if rows:
        keys = list(dict.fromkeys(k for r in rows for k in r))
        with open(out / "soak.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=keys)
            w.writeheader()
            w.writerows(rows)
    with open(out / "faults.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["start_s", "end_s", "kind", "target"])
        for x in faults:
            w.writerow([f"{x['start']:.2f}", f"{(x['end'] or x['start']):.2f}", x["kind"], x["target"]])
    with open(out / "latency.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["t_s", "latency_ms"])
        for t, x in latencies:
            w.writerow([f"{t:.3f}", f"{x:.2f}"])


def window_table(rows, faults, duration):
    """One row per window (a twentieth of the run, at least 10 s): what the per-second rows say."""
    width = max(10, int(duration / 20 + 0.5))
    table = []
    for lo in range(0, int(duration), width):
        part = [r for r in rows if lo <= r["t"] < lo + width]
        if not part:
            continue

        def col(key, fn):
            v = [r[key] for r in part if r.get(key) not in ("", None)]
            return fn(v) if v else None

        w_rss = [r[k] for r in part for k in worker_keys([r], "rss_mb") if r[k] != ""]
        w_fds = [r[k] for r in part for k in worker_keys([r], "fds") if r[k] != ""]
        w_thr = [r[k] for r in part for k in worker_keys([r], "threads") if r[k] != ""]
        lat = [r["latency_p99_ms"] for r in part if r.get("latency_p99_ms") != ""]
        p50 = [r["latency_p50_ms"] for r in part if r.get("latency_p50_ms") != ""]
        table.append({"from_s": lo, "to_s": lo + width, "master_rss_mb": col("master_rss_mb", max), "master_fds": col("master_fds", max),
                      "master_threads": col("master_threads", max), "worker_rss_mb_max": max(w_rss) if w_rss else None,
                      "worker_fds_max": max(w_fds) if w_fds else None, "worker_threads_max": max(w_thr) if w_thr else None,
                      "frames": sum(r["frames"] for r in part),
                      "latency_p50_ms": statistics.median(p50) if p50 else None, "latency_p99_ms": max(lat) if lat else None,
                      "lost": sum(r.get("master_frames_dropped", 0) for r in part),
                      "out_of_order": sum(r["frames_out_of_order"] + r["frames_duplicated"] for r in part),
                      "late": sum(r["frames_late"] for r in part), "reissued": sum(r["tiles_reissued"] for r in part),
                      "faults": ",".join(f["kind"] for f in faults if lo <= f["start"] < lo + width)})
    return table


def print_table(table):
    def fmt(v, spec):
        return "-" if v is None else format(v, spec)
    print(f"{'window s':>11} {'master MB':>9} {'fds':>4} {'thr':>4} {'worker MB':>9} {'fds':>4} {'thr':>4} {'frames':>6} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'lost':>4} {'ooo':>4} {'late':>4} {'reiss':>5}  faults")
    for w in table:
        print(f"{w['from_s']:>5}-{w['to_s']:<5} {fmt(w['master_rss_mb'], '9.1f')} {fmt(w['master_fds'], '4d')} "
              f"{fmt(w['master_threads'], '4d')} {fmt(w['worker_rss_mb_max'], '9.1f')} {fmt(w['worker_fds_max'], '4d')} "
              f"{fmt(w['worker_threads_max'], '4d')} {w['frames']:>6} {fmt(w['latency_p50_ms'], '7.1f')} "
              f"{fmt(w['latency_p99_ms'], '7.1f')} {w['lost']:>4} {w['out_of_order']:>4} {w['late']:>4} {w['reissued']:>5}  {w['faults']}")


def plot(out, rows, faults):
    spans = [(f["start"], f["end"] or f["start"], f"{f['kind']} {f['target']}".replace(" " + f["kind"], "")) for f in faults]

    def series(key):
        return [(r["t"], r[key] if r.get(key) not in ("", None) else None) for r in rows]

    worker_max = [(r["t"], max([r[k] for k in worker_keys([r], "rss_mb") if r[k] != ""], default=None)) for r in rows]
    line_plot(out / "memory.svg", "RSS over time (faults shaded)", "time (s)", "RSS (MB)",
              [("master", series("master_rss_mb")), ("largest worker", worker_max)], spans)
    line_plot(out / "latency.svg", "pose -> frame latency per second (faults shaded)", "time (s)", "latency (ms)",
              [("p50", series("latency_p50_ms")), ("p99", series("latency_p99_ms"))], spans)
    line_plot(out / "resources.svg", "open file descriptors and threads (master)", "time (s)", "count",
              [("master fds", series("master_fds")), ("master threads", series("master_threads"))], spans)
