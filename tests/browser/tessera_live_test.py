#!/usr/bin/env python3
"""`./tessera live` as a user runs it, against this build: the Cornell box packed (and cached), a local
cluster on the host device, the page served; headless Chromium at the printed URL gets frames; Ctrl-C
(SIGINT to the command's process group, as a terminal sends it) leaves no process of the session
behind; the second run, its scene cached, serves the page within 5 s, and a SIGTERM to ./tessera
alone (`kill PID`: the master and workers get no signal of their own) still leaves nothing behind.

Exit status 77 (skipped) only where chromium, chromedriver or python3-selenium are not installed."""
import argparse
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from live_cluster import SKIP, LiveCluster, Skip, load_selenium  # noqa: E402

SECOND_START_LIMIT_S = 5.0


def session_processes(sid):
    """Processes (pid, command) still in session `sid`."""
    found = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / 'stat').read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(')') + 2:].split()
        if int(fields[3]) == sid:  # state ppid pgrp session ...
            found.append((int(entry.name), stat[stat.index('(') + 1:stat.rindex(')')]))
    return found


class LiveRun:
    """One `./tessera live` in a session of its own, as a terminal would run it."""

    def __init__(self, source, env, log):
        self.log_path = log
        self.log = open(log, 'ab')
        self.proc = subprocess.Popen(
            [str(source / 'tessera'), 'live', 'cornell', '--device', 'host', '--local-workers', '2',
             '--host', '127.0.0.1', '--port', '0', '--', '--size', '160x120', '--tile', '40', '--guard-band', '0'],
            cwd=source, env=env, stdout=subprocess.PIPE, stderr=self.log, start_new_session=True)

    def url(self, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.1)
            if ready:
                line = self.proc.stdout.readline()
                if not line:
                    break
                self.log.write(line)
                match = re.search(r'serving (https://\S+)', line.decode(errors='replace'))
                if match:
                    self._drain()
                    return match.group(1)
            elif self.proc.poll() is not None:
                break
        raise AssertionError(f'./tessera live printed no "serving https://..." line within {timeout} s:\n{self.text()}')

    def _drain(self):
        """The rest of its stdout goes to the log, so that it never blocks on a full pipe."""
        import threading

        def pump():
            for chunk in iter(lambda: self.proc.stdout.read1(4096), b''):
                self.log.write(chunk)
                self.log.flush()
        self.pump = threading.Thread(target=pump, daemon=True)
        self.pump.start()

    def text(self):
        self.log.flush()
        return Path(self.log_path).read_text(errors='replace')[-4000:]

    def interrupt(self):
        """Ctrl-C: SIGINT to the whole process group; returns the exit status."""
        return self.stop(lambda: os.killpg(self.proc.pid, signal.SIGINT))

    def terminate(self):
        """`kill PID`: SIGTERM to ./tessera alone, none to the master or workers it started."""
        return self.stop(lambda: self.proc.send_signal(signal.SIGTERM))

    def stop(self, send):
        send()
        try:
            self.proc.wait(timeout=20)
            self.pump.join(timeout=5)
        except subprocess.TimeoutExpired:
            raise AssertionError(f'./tessera live did not end within 20 s of Ctrl-C:\n{self.text()}')
        return self.proc.returncode

    def kill(self):
        """Whatever of the session is still running (a failed test's leftovers), killed by process id."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        for pid, _ in session_processes(self.proc.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def check_nothing_left(run):
    deadline = time.time() + 5
    left = session_processes(run.proc.pid)
    while left and time.time() < deadline:
        time.sleep(0.1)
        left = session_processes(run.proc.pid)
    assert not left, f'processes left behind: {left}\n{run.text()}'


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--build', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--shared', required=True)
    args = parser.parse_args()
    try:
        load_selenium()
    except Skip as reason:
        print(f'skipped: {reason}')
        return SKIP
    source = Path(args.source).resolve()
    scratch = Path(tempfile.mkdtemp(prefix='tessera_live_cmd_'))
    env = dict(os.environ, TESSERA_NO_BUILD='1', TESSERA_BUILD_DIR=str(Path(args.build).resolve()),
               TESSERA_SHARED_DIR=os.environ.get('TESSERA_SHARED_DIR', args.shared),
               TESSERA_OUT_DIR=str(scratch / 'out'), XDG_CONFIG_HOME=str(scratch / 'config'))
    browser = LiveCluster(args.build, args.source, args.shared)
    runs = []
    try:
        # First run: packs the Cornell box, starts the cluster and the master.
        first = LiveRun(source, env, scratch / 'live.log')
        runs.append(first)
        browser.url = first.url(timeout=120)
        assert browser.url.startswith('https://127.0.0.1:'), browser.url
        browser.open_page()  # waits for the first frame drawn
        frame = browser.js("return document.getElementById('hud-frame').textContent")
        print(f'first run: {browser.url.split("?")[0]} drew frame {frame}')
        browser.driver.quit()
        browser.driver = None
        status = first.interrupt()
        assert status in (0, 130), f'./tessera live exited {status} on Ctrl-C:\n{first.text()}'
        check_nothing_left(first)
        print('first run: Ctrl-C left no process behind')

        # Second run: the packed scene is cached, so the page is served at once.
        started = time.time()
        second = LiveRun(source, env, scratch / 'live.log')
        runs.append(second)
        browser.url = second.url(timeout=60)
        seconds = time.time() - started
        print(f'second run: serving after {seconds:.2f} s')
        assert seconds < SECOND_START_LIMIT_S, f'the second start took {seconds:.2f} s (limit {SECOND_START_LIMIT_S} s)'
        browser.open_page()
        browser.driver.quit()
        browser.driver = None
        status = second.terminate()
        assert status in (0, 130, 143), f'./tessera live exited {status} on SIGTERM:\n{second.text()}'
        check_nothing_left(second)
        print('second run: frames drawn, SIGTERM to ./tessera alone left no process behind')
        packs = list((scratch / 'out' / 'scenes').glob('*/*.tpk'))
        assert len(packs) == 1, f'expected one cached pack, found {packs}'
        return 0
    finally:
        if browser.driver:
            try:
                browser.driver.quit()
            except Exception:
                pass
        for run in runs:
            run.kill()
        import shutil
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(browser.dir, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
