"""A live session for the browser tests: the Cornell box packed, two tessera-worker daemons on the host
device, tessera-master --serve on a free loopback port, and headless Chromium (Debian's chromium and
chromium-driver through python3-selenium) on the page."""
import argparse
import json
import os
import re
import select
import shutil
import signal
import ssl
import subprocess
import tempfile
import sys
import time
import traceback
import urllib.error
import urllib.request
from pathlib import Path

SKIP = 77  # CTest's SKIP_RETURN_CODE for these tests


class Skip(Exception):
    """The browser cannot run here at all (not installed); the test is skipped, not failed."""


def load_selenium():
    missing = [p for p in ('/usr/bin/chromium', '/usr/bin/chromedriver') if not os.access(p, os.X_OK)]
    try:
        from selenium import webdriver  # noqa: F401  (python3-selenium)
    except ImportError:
        missing.append('python3-selenium')
    if missing:
        raise Skip('not installed: ' + ', '.join(missing) + ' (./tessera installs chromium, chromium-driver, python3-selenium)')
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    return webdriver, Service


class Process:
    """A child process with its output in a log file."""

    def __init__(self, args, log, env=None, capture_stdout=False):
        self.log_path = log
        self.log_file = open(log, 'wb')
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE if capture_stdout else self.log_file,
                                     stderr=self.log_file, env=env)

    def log(self):
        try:
            return Path(self.log_path).read_text(errors='replace')
        except OSError:
            return ''

    def running(self):
        return self.proc.poll() is None

    def kill(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()

    def pause(self):
        """Freezes the process (SIGSTOP): its sockets stay open, it answers nothing."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGSTOP)

    def resume(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)

    def stop(self, timeout=5):
        self.resume()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log_file.close()


class LiveCluster:
    """Workers, master and browser of one test; stop() ends them all (the test's `finally`)."""

    def __init__(self, build, source, shared, keep_dir=None):
        self.build = Path(build)
        self.source = Path(source)
        self.shared = Path(shared)
        self.dir = Path(tempfile.mkdtemp(prefix='tessera_live_'))
        self.keep_dir = keep_dir
        self.workers = []
        self.master = None
        self.driver = None
        self.url = None

    # ---- cluster ----

    def pack_cornell(self):
        tpk = self.dir / 'scenes' / 'cornell.tpk'
        if tpk.exists():  # a master started again
            return tpk
        tpk.parent.mkdir()
        subprocess.run([str(self.build / 'tessera-pack'), str(self.shared / 'scenes/cornell_box/cornell_box.obj'),
                        '--settings', str(self.source / 'scene-packer/scenes/cornell_box.scene.txtpb'), '-o', str(tpk)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        return tpk

    def start_workers(self, count=2, slowdown_ms=0, device='host'):
        """`slowdown_ms`: each worker sleeps this long after every tile (a slow cluster); `device`: the
        workers' --device (null: a fixed image, for tests of the master's side)."""
        self.secret = self.dir / 'secret'
        self.secret.unlink(missing_ok=True)
        subprocess.run([str(self.build / 'worker' / 'tessera-worker'), '--make-secret', str(self.secret)],
                       check=True, stdout=subprocess.DEVNULL)
        for k in range(count):
            name = f'w{k + 1}'
            port_file = self.dir / f'{name}.port'
            scenes = self.dir / f'{name}-scenes'  # the master pushes the scene to each worker
            scenes.mkdir()
            worker = Process([str(self.build / 'worker/tessera-worker'), '--listen', '127.0.0.1:0', '--port-file', str(port_file),
                              '--scenes', str(scenes), '--secret-file', str(self.secret), '--name', name,
                              '--device', device, *(['--threads', '1'] if device == 'host' else []),
                              *(['--slowdown-ms', str(slowdown_ms)] if slowdown_ms else [])], self.dir / f'{name}.log')
            deadline = time.time() + 30
            while not port_file.exists() or not port_file.read_text().strip():
                if not worker.running() or time.time() > deadline:
                    raise AssertionError(f'worker {name} did not start:\n{worker.log()}')
                time.sleep(0.02)
            worker.address = port_file.read_text().strip()
            self.workers.append(worker)

    def pause_workers(self):
        """Freezes every worker: no frame comes until resume_workers()."""
        for worker in self.workers:
            worker.pause()

    def resume_workers(self):
        for worker in self.workers:
            worker.resume()

    def start_master(self, *extra, size='160x120', tile=40, serve='127.0.0.1:0', guard_band=0, codec='jpeg', scene=None):
        """Starts tessera-master --serve and returns the URL it prints (with the token). The guard band is
        off unless asked for: it renders frames larger than the size asked for. The pages' frames are JPEG
        unless `codec` says otherwise (auto, h264, vp9, av1). `scene`: a .tpk (default: the Cornell box)."""
        tpk = scene or self.pack_cornell()
        env = dict(os.environ, XDG_CONFIG_HOME=str(self.dir / 'config'))
        args = [str(self.build / 'master/tessera-master'), '--workers', ','.join(w.address for w in self.workers),
                '--secret-file', str(self.secret), '--scene', str(tpk), '--serve', serve,
                '--size', size, '--tile', str(tile), '--guard-band', str(guard_band), '--codec', codec, *extra]
        self.master = Process(args, self.dir / 'master.log', env=env, capture_stdout=True)
        stdout = self.master.proc.stdout
        deadline = time.time() + 60
        line = b''
        while time.time() < deadline:
            ready, _, _ = select.select([stdout], [], [], 0.1)
            if ready:
                line = stdout.readline()
                text = line.decode(errors='replace').strip()
                match = re.match(r'serving (https://\S+)', text)
                if match:
                    self.url = match.group(1)
                    self._drain(stdout)
                    return self.url
                if not line:
                    break
            elif not self.master.running():
                break
        raise AssertionError(f'tessera-master printed no "serving https://..." line (got {line!r}):\n{self.master.log()}')

    def _drain(self, stdout):
        """Keeps reading the master's stdout into its log so it never blocks on a full pipe."""
        import threading

        def pump():
            for chunk in iter(lambda: stdout.read1(4096), b''):
                self.master.log_file.write(chunk)
                self.master.log_file.flush()
        threading.Thread(target=pump, daemon=True).start()

    def origin(self):
        match = re.match(r'(https://[^/]+)', self.url)
        return match.group(1)

    def token(self):
        return re.search(r'token=([0-9A-Za-z]+)', self.url).group(1)

    def http_get(self, path):
        """(status, body) of an HTTPS GET on the master, certificate not checked (it is self-signed)."""
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        try:
            with urllib.request.urlopen(self.origin() + path, context=context, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    # ---- browser ----

    def open_browser(self, init_scripts=()):
        webdriver, Service = load_selenium()
        options = webdriver.ChromeOptions()
        options.binary_location = '/usr/bin/chromium'
        for flag in ('--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                     '--disable-background-networking', '--disable-component-update', '--disable-sync',
                     '--ignore-certificate-errors', '--enable-unsafe-swiftshader', '--window-size=1280,860', '--disable-dev-shm-usage',
                     f'--user-data-dir={self.dir / "chromium-profile"}'):
            options.add_argument(flag)
        options.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
        service = Service('/usr/bin/chromedriver', log_path=str(self.dir / 'chromedriver.log'))
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_script_timeout(30)
        for script in init_scripts:
            self.driver.execute_cdp_cmd('Page.addScriptToEvaluateOnNewDocument', {'source': script})
        return self.driver

    def open_page(self, init_scripts=()):
        scripts = [(Path(__file__).parent / 'socket_recorder.js').read_text(), *init_scripts]
        self.open_browser(scripts)
        self.driver.get(self.url)
        self.wait_for('first frame drawn', lambda: self.js("return document.getElementById('hud-frame').textContent") != '-')
        return self.driver

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def wait_for(self, what, predicate, timeout=60, interval=0.1):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = predicate()
            if value:
                return value
            if self.master and not self.master.running():
                raise AssertionError(f'tessera-master exited while waiting for {what}\n{self.diagnostics()}')
            time.sleep(interval)
        raise AssertionError(f'timed out after {timeout} s waiting for {what}\n{self.diagnostics()}')

    def socket_log(self, key):
        return self.js(f'return window.__socketLog.{key}')

    def canvas_digest(self):
        """A hash of the pixels on the page's frame canvas (what the user sees)."""
        return self.js("""
            const c = document.getElementById('frame-canvas');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            let h = 2166136261;
            for (let i = 0; i < d.length; ++i) h = Math.imul(h ^ d[i], 16777619) >>> 0;
            return [c.width, c.height, h];""")

    def diagnostics(self):
        parts = []
        if self.driver:
            try:
                parts.append('browser console:\n' + '\n'.join(str(e) for e in self.driver.get_log('browser')[-30:]))
                parts.append('events on the page:\n' + self.js("return document.getElementById('events').innerText"))
            except Exception as error:  # the browser itself may be what broke
                parts.append(f'(browser unreachable: {error})')
        if self.master:
            parts.append('master log (tail):\n' + self.master.log()[-4000:])
        return '\n'.join(parts)

    def screenshot(self, path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.driver.save_screenshot(str(path))

    def stop(self):
        if self.driver:
            try:
                self.driver.quit()
            except Exception:
                pass
        if self.master:
            self.master.stop()
        for worker in self.workers:
            worker.stop()
        if self.keep_dir:
            shutil.copytree(self.dir, self.keep_dir, dirs_exist_ok=True)
        shutil.rmtree(self.dir, ignore_errors=True)


def fake_xr_script(config):
    source = (Path(__file__).parent / 'fake_webxr.js').read_text()
    return source.replace('__CONFIG__', json.dumps(config))


def run_case(doc, cases):
    """The command line of a browser test script: --build, --source, --shared, [--artifacts], [--keep],
    CASE (one of `cases`, name -> function(cluster, args)); returns the exit status (0 passed, 1 failed,
    77 skipped: no browser installed here)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--build', required=True)
    parser.add_argument('--source', required=True)
    parser.add_argument('--shared', required=True, help='the shared scenes, unless $TESSERA_SHARED_DIR is set')
    parser.add_argument('--artifacts', help='folder for the page screenshot')
    parser.add_argument('--keep', help='copy the session folder (logs, frames) here')
    parser.add_argument('case', choices=sorted(cases))
    args = parser.parse_args()
    shared = os.environ.get('TESSERA_SHARED_DIR') or args.shared
    if args.artifacts:
        Path(args.artifacts).mkdir(parents=True, exist_ok=True)  # the cases write their images there
    c = LiveCluster(args.build, args.source, shared, args.keep)
    try:
        cases[args.case](c, args)
    except Skip as skip:
        print(f'SKIPPED: {skip}')
        return SKIP
    except AssertionError as failure:
        traceback.print_exc()
        print(f'FAILED: {failure}')
        return 1
    finally:
        c.stop()
    print(f'passed: {args.case}')
    sys.stdout.flush()
    return 0
