#!/usr/bin/env python3
"""NBD export benchmark (not a test).

In one run, over the same image file and through the same client (fio's nbd engine):
  * our export of a `file` device   vs  nbdkit's file plugin   (both through the page cache)
  * our export of a `direct` device vs  qemu-nbd --cache=none --aio=io_uring  (both O_DIRECT)
for 4 KiB random read and write at iodepth 32 and 1 MiB sequential write. Peers run in
alternation, several rounds; the table shows medians and ratios (ours / peer).
Server CPU is read from /proc/<pid>/stat (utime+stime) around each fio run.
"""
import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
M2 = os.path.expanduser("~/.m2/repository")

WORKLOADS = [
    # label, fio rw, bs, iodepth
    ("4 KiB random read, qd32", "randread", "4k", 32),
    ("4 KiB random write, qd32", "randwrite", "4k", 32),
    ("1 MiB sequential write, qd8", "write", "1m", 8),
]


def classpath():
    parts = [
        "bundles/nbd/target/test-classes", "bundles/nbd/target/classes", "bundles/api/target/classes",
        "bundles/driver-file/target/classes", "bundles/driver-direct/target/classes",
        "bundles/driver-memory/target/classes",
    ]
    cp = [os.path.join(ROOT, p) for p in parts]
    cp.append(os.path.join(M2, "org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar"))
    cp.append(os.path.join(M2, "org/slf4j/slf4j-simple/2.0.17/slf4j-simple-2.0.17.jar"))
    return ":".join(cp)


def wait_port(port, proc, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit("server exited early: %s" % proc.args)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit("server on port %d did not come up" % port)


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # after the ")" field 3 is state; utime and stime are fields 14 and 15 of the full line
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, name, cmd, port, export, stdin=False):
        self.name, self.cmd, self.port, self.export = name, cmd, port, export
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=open(os.devnull, "w"))
        wait_port(port, self.proc)

    @property
    def uri(self):
        return "nbd://127.0.0.1:%d/%s" % (self.port, self.export)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)


def fio(uri, rw, bs, qd, runtime, size):
    cmd = ["fio", "--name=bench", "--ioengine=nbd", "--uri=" + uri, "--rw=" + rw, "--bs=" + bs,
           "--iodepth=%d" % qd, "--size=" + size, "--time_based", "--runtime=%d" % runtime, "--ramp_time=2",
           "--randrepeat=0", "--norandommap", "--output-format=json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    job = json.loads(out[out.index("{"):])["jobs"][0]
    side = job["read"] if rw.endswith("read") else job["write"]
    clat = side.get("clat_ns", {}).get("percentile", {})
    p99 = clat.get("99.000000", 0) / 1e6
    return {"iops": side["iops"], "mibs": side["bw_bytes"] / 2**20, "p99": p99,
            "bytes": side["io_bytes"]}


def measure(server, wl, runtime, size):
    label, rw, bs, qd = wl
    c0 = cpu_seconds(server.proc.pid)
    t0 = time.time()
    r = fio(server.uri, rw, bs, qd, runtime, size)
    c1 = cpu_seconds(server.proc.pid)
    # fio's io_bytes excludes the ramp; CPU covers ramp + run, so scale bytes by wall time
    wall = time.time() - t0
    moved = r["mibs"] * 2**20 * wall
    r["cpu_per_gib"] = (c1 - c0) / (moved / 2**30) if moved else float("nan")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--image", default="/var/tmp/strata-nbd-bench/disk.img")
    ap.add_argument("--size", default="1g", help="image size (fio --size)")
    ap.add_argument("--runtime", type=int, default=10, help="seconds per fio run")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pairs", default="file,direct")
    ap.add_argument("--workers", type=int, default=0, help="our server's workers per connection (0: default)")
    ap.add_argument("--only", default="", help="run only workloads whose label contains this text")
    ap.add_argument("--markdown", help="write the table to this file")
    a = ap.parse_args()

    os.makedirs(os.path.dirname(a.image), exist_ok=True)
    size_bytes = int(a.size[:-1]) * {"k": 2**10, "m": 2**20, "g": 2**30}[a.size[-1].lower()]
    if not os.path.exists(a.image) or os.path.getsize(a.image) != size_bytes:
        print("creating %s (%s of random data)" % (a.image, a.size), flush=True)
        subprocess.run(["dd", "if=/dev/urandom", "of=" + a.image, "bs=1M", "count=%d" % (size_bytes >> 20),
                        "status=none"], check=True)

    java = ["java", "-Xms512m", "-Xmx512m", "-XX:+UseParallelGC", "-cp", classpath(),
            "dev.strata.nbd.testing.ExportMain"]
    extra = ["--workers", str(a.workers)] if a.workers else []
    pairs = {
        "file": (lambda: Server("strata file", java + ["file", "path=" + a.image, "--port", "10931"] + extra,
                                10931, "disk", stdin=True),
                 lambda: Server("nbdkit file", ["nbdkit", "-f", "-p", "10932", "-i", "127.0.0.1", "file",
                                                "file=" + a.image], 10932, "disk")),
        "direct": (lambda: Server("strata direct", java + ["direct", "path=" + a.image, "--port", "10933"] + extra,
                                  10933, "disk", stdin=True),
                   lambda: Server("qemu-nbd direct", ["qemu-nbd", "-f", "raw", "--cache=none", "--aio=io_uring",
                                                      "-b", "127.0.0.1", "-p", "10934", "-x", "disk", "-t",
                                                      "--shared=8", a.image], 10934, "disk")),
    }
    rows = []
    for pair in a.pairs.split(","):
        ours_f, peer_f = pairs[pair]
        ours, peer = ours_f(), peer_f()
        try:
            for s in (ours, peer):  # warm-up (JIT, page cache)
                fio(s.uri, "randread", "4k", 32, 5, a.size)
            for wl in [w for w in WORKLOADS if a.only in w[0]]:
                res = {ours.name: [], peer.name: []}
                for rnd in range(a.rounds):
                    order = (ours, peer) if rnd % 2 == 0 else (peer, ours)
                    for s in order:
                        r = measure(s, wl, a.runtime, a.size)
                        res[s.name].append(r)
                        print("%-28s %-16s round %d: %9.0f IOPS %8.1f MiB/s p99 %6.2f ms CPU %5.2f s/GiB" % (
                            wl[0], s.name, rnd, r["iops"], r["mibs"], r["p99"], r["cpu_per_gib"]), flush=True)
                med = {n: {k: statistics.median(x[k] for x in v) for k in ("iops", "mibs", "p99", "cpu_per_gib")}
                       for n, v in res.items()}
                rows.append((wl[0], pair, ours.name, peer.name, med[ours.name], med[peer.name]))
        finally:
            ours.stop()
            peer.stop()

    lines = ["| workload | ours | peer | IOPS ours / peer | MiB/s ours / peer | p99 ms ours / peer | "
             "CPU s/GiB ours / peer | IOPS ratio | CPU/GiB ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, pair, on, pn, o, p in rows:
        lines.append("| %s | %s | %s | %.0f / %.0f | %.1f / %.1f | %.2f / %.2f | %.2f / %.2f | %.2f× | %.2f× |" % (
            label, on, pn, o["iops"], p["iops"], o["mibs"], p["mibs"], o["p99"], p["p99"],
            o["cpu_per_gib"], p["cpu_per_gib"], o["iops"] / p["iops"] if p["iops"] else float("nan"),
            o["cpu_per_gib"] / p["cpu_per_gib"] if p["cpu_per_gib"] else float("nan")))
    table = "\n".join(lines)
    print()
    print(table)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
