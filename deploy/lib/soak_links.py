"""deploy/soak's emulated links between the master and each worker, where the link faults happen.

Two ways, chosen by what this machine allows:
  netem  each worker in a network namespace of its own, joined by a veth pair; `tc netem` on both
         ends carries the faults (as deploy/bench-cluster's links). Needs root, iproute2 and the
         kernel's sch_netem.
  relay  tessera-netem-relay between the master and each worker (loopback, no root): its --control
         file and SIGHUP carry the faults. TCP sees no lost packets there: a lost chunk is held a
         retransmission time (200 ms), as TCP would, and a partition holds everything until it ends.
Either way a fault is set_fault(k, kind) and cleared with set_fault(k, None).
"""
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

# The faults' link settings, for each way.
NETEM_ARGS = {None: ["delay", "1ms"], "partition": ["loss", "100%"], "loss": ["loss", "20%"],
              "bandwidth": ["delay", "1ms", "rate", "2mbit"]}
RELAY_WORDS = {None: "", "partition": "partition=on", "loss": "loss=20%", "bandwidth": "rate=2mbit"}


def netem_available():
    """(True, '') when namespaces with netem work here, else (False, why)."""
    if os.geteuid() != 0:
        return False, "not root"
    if not shutil.which("ip") or not shutil.which("tc"):
        return False, "no ip/tc (iproute2)"
    tag = f"tsoakchk{os.getpid() % 100000}"
    made = subprocess.run(["ip", "link", "add", f"{tag}a", "type", "veth", "peer", "name", f"{tag}b"], capture_output=True)
    if made.returncode:
        return False, "veth: " + made.stderr.decode().strip()
    try:
        r = subprocess.run(["tc", "qdisc", "add", "dev", f"{tag}a", "root", "netem", "delay", "1ms"], capture_output=True, text=True)
        if r.returncode:
            return False, "sch_netem: " + (r.stderr.strip() or "unavailable")
    finally:
        subprocess.run(["ip", "link", "del", f"{tag}a"], capture_output=True)
    return True, ""


class NetemLinks:
    way = "netem"

    def __init__(self, count, tag):
        self.count, self.tag, self.made = count, tag, []

    def ns(self, k):
        return f"tsoak{self.tag}w{k}"

    def host_if(self, k):
        return f"tsk{self.tag}h{k}"[:15]

    def listen_address(self, k, port):
        return f"10.79.{k}.2:{port}"

    def setup(self):
        for k in range(self.count):
            ns, hif = self.ns(k), self.host_if(k)
            self.made.append(k)
            for c in (["ip", "netns", "add", ns],
                      ["ip", "link", "add", hif, "type", "veth", "peer", "name", "eth0", "netns", ns],
                      ["ip", "addr", "add", f"10.79.{k}.1/30", "dev", hif], ["ip", "link", "set", hif, "up"],
                      ["ip", "-n", ns, "addr", "add", f"10.79.{k}.2/30", "dev", "eth0"],
                      ["ip", "-n", ns, "link", "set", "eth0", "up"], ["ip", "-n", ns, "link", "set", "lo", "up"],
                      ["tc", "qdisc", "add", "dev", hif, "root", "netem"] + NETEM_ARGS[None],
                      ["tc", "-n", ns, "qdisc", "add", "dev", "eth0", "root", "netem"] + NETEM_ARGS[None]):
                r = subprocess.run(c, capture_output=True, text=True)
                if r.returncode:
                    raise RuntimeError(f"{' '.join(c)}: {r.stderr.strip()}")

    def worker_prefix(self, k):
        return ["ip", "netns", "exec", self.ns(k)]

    def master_address(self, k, worker_address, port=0):
        return worker_address

    def set_fault(self, k, kind):
        for c in (["tc", "qdisc", "change", "dev", self.host_if(k), "root", "netem"] + NETEM_ARGS[kind],
                  ["tc", "-n", self.ns(k), "qdisc", "change", "dev", "eth0", "root", "netem"] + NETEM_ARGS[kind]):
            subprocess.run(c, capture_output=True)

    def processes(self):
        return []

    def teardown(self):
        for k in self.made:
            subprocess.run(["ip", "link", "del", self.host_if(k)], capture_output=True)
            subprocess.run(["ip", "netns", "del", self.ns(k)], capture_output=True)
        self.made = []


class Relay:
    """One tessera-netem-relay: LISTEN (a fixed port once chosen) -> target, with a control file."""

    def __init__(self, command, folder, name, target):
        self.command, self.folder, self.name, self.target = command, Path(folder), name, target
        self.control = self.folder / f"{name}.control"
        self.control.write_text("")
        self.port, self.process = 0, None

    def start(self):
        port_file = self.folder / f"{self.name}.port"
        port_file.unlink(missing_ok=True)
        log = open(self.folder / f"{self.name}.log", "a")
        self.process = subprocess.Popen(self.command + ["--route", f"127.0.0.1:{self.port}={self.target}", "--port-file", str(port_file),
                                                        "--control", str(self.control)],
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        for _ in range(300):
            if port_file.exists() and port_file.read_text().strip():
                self.port = int(port_file.read_text().split()[0].rsplit(":", 1)[1])
                return f"127.0.0.1:{self.port}"
            if self.process.poll() is not None:
                raise RuntimeError(f"tessera-netem-relay {self.name} ended at start (see {self.folder}/{self.name}.log)")
            time.sleep(0.05)
        raise RuntimeError(f"tessera-netem-relay {self.name} did not start")

    def set(self, words):
        self.control.write_text(words + "\n")
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGHUP)

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


class RelayLinks:
    way = "relay"

    def __init__(self, count, relay_command, folder):
        self.count, self.command, self.folder = count, relay_command, folder
        self.relays = {}

    def setup(self):
        pass

    def listen_address(self, k, port):
        return f"127.0.0.1:{port}"

    def worker_prefix(self, k):
        return []

    def master_address(self, k, worker_address, port=0):
        """The relay's address for worker k (started on first use, on `port`; it outlives worker restarts)."""
        if k not in self.relays:
            self.relays[k] = Relay(self.command, self.folder, f"relay-{k}", worker_address)
            self.relays[k].port = port
            return self.relays[k].start()
        return f"127.0.0.1:{self.relays[k].port}"

    def set_fault(self, k, kind):
        self.relays[k].set(RELAY_WORDS[kind])

    def processes(self):
        return [r.process for r in self.relays.values() if r.process]

    def teardown(self):
        for r in self.relays.values():
            r.stop()
