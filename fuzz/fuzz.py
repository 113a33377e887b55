#!/usr/bin/env python3
"""Mutation fuzzing of Darkroom's decoders through the real binary.

Takes the bundled samples (and, with --corpus DIR, every JPEG, PNG, HEIC, HEIF and AVIF under
DIR), mutates each with a seeded generator (bit flips, byte runs, truncation, chunk, segment and
ISO box length lies, duplicated and spliced blocks) and runs `darkroom inspect` and `darkroom render` on every mutant, each
with a time limit and a memory limit. A crash (a signal, or an exit status above 2), a hang
(past the time limit) or a peak resident size above the memory limit is a finding: the mutant
is kept under fuzz/findings/ and the run ends with status 1.

  fuzz/fuzz.py --binary .build/release/darkroom --seconds 300 [--corpus DIR] [--seed N] [--memory-mb N]

With --http, fuzzes HTTP requests against a live `darkroom serve` instead (fuzz/http_fuzz.py).
"""
import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time


def mutate(data: bytes, rng: random.Random) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(7)
        if not b:
            break
        if kind == 0:  # bit flips
            for _ in range(rng.randint(1, 16)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # a run of one byte
            i = rng.randrange(len(b))
            b[i:i + rng.randint(1, 64)] = bytes([rng.choice([0, 0xFF, 0x7F, 0x80])]) * rng.randint(1, 64)
        elif kind == 2:  # truncation
            del b[rng.randrange(len(b)):]
        elif kind == 3:  # a lying 16-bit length after a JPEG marker
            markers = [i for i in range(len(b) - 3) if b[i] == 0xFF and 0xC0 <= b[i + 1] <= 0xFE]
            if markers:
                i = rng.choice(markers) + 2
                b[i:i + 2] = struct.pack(">H", rng.choice([0, 1, 2, 0xFFFF, rng.randrange(65536)]))
        elif kind == 4:  # a lying 32-bit PNG chunk length or a huge SOF/IHDR size
            for tag in (b"IHDR", b"IDAT", b"eXIf", b"\xff\xc0", b"\xff\xc2"):
                i = bytes(b).find(tag)
                if i >= 4 and rng.random() < 0.5:
                    j = i - 4 if tag.startswith(b"I") or tag == b"eXIf" else i + 5
                    b[j:j + 4] = struct.pack(">I", rng.choice([0, 0x7FFFFFFF, 0xFFFFFFFF, rng.randrange(1 << 32)]))
                    break
        elif kind == 5 and rng.random() < 0.5:  # a lying ISO box size (HEIF: ftyp, meta, iinf, iloc, ipco, mdat, ...)
            boxes = [i - 4 for tag in (b"ftyp", b"meta", b"iinf", b"iloc", b"iprp", b"ipco", b"ispe", b"mdat", b"hvcC", b"av1C", b"colr", b"irot")
                     for i in [bytes(b).find(tag)] if i >= 4]
            if boxes:
                i = rng.choice(boxes)
                b[i:i + 4] = struct.pack(">I", rng.choice([0, 1, 7, 0xFFFFFFFF, rng.randrange(1 << 32), rng.randrange(64)]))
        elif kind == 5:  # a block duplicated elsewhere
            i = rng.randrange(len(b))
            block = b[i:i + rng.randint(1, 4096)]
            j = rng.randrange(len(b))
            b[j:j] = block
        else:  # EXIF offsets pointing at themselves
            i = bytes(b).find(b"Exif\x00\x00")
            if i >= 0 and i + 20 < len(b):
                k = rng.randrange(i + 6, min(len(b) - 4, i + 400))
                b[k:k + 4] = struct.pack(rng.choice(["<I", ">I"]), rng.choice([0, 8, k - i - 6, 0xFFFFFFFF]))
    return bytes(b)


def run(cmd, timeout):
    """Runs cmd; its exit status (None when it was killed past the timeout), seconds, the end of
    its standard error and its peak resident size in MB."""
    started = time.monotonic()
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err,
                                 env=dict(os.environ, SWIFT_BACKTRACE="enable=no"))
        status = None
        while True:
            pid, raw, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                status = os.waitstatus_to_exitcode(raw)
                break
            if time.monotonic() - started > timeout:
                child.kill()
                _, _, usage = os.wait4(child.pid, 0)
                break
            time.sleep(0.005)
        err.seek(0)
        return status, time.monotonic() - started, err.read()[-400:], usage.ru_maxrss / 1024


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(root, ".build/release/darkroom"))
    parser.add_argument("--seconds", type=float, default=300)
    parser.add_argument("--timeout", type=float, default=30, help="per command")
    parser.add_argument("--memory-mb", type=float, default=1024, help="peak resident size per command")
    parser.add_argument("--corpus", action="append", default=[])
    parser.add_argument("--only", default="", help="seed extensions to keep, such as heic,heif,avif")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()

    seeds = []
    for directory in [os.path.join(root, "samples")] + args.corpus:
        for base, _, names in os.walk(directory):
            for name in names:
                if name.lower().endswith((".jpg", ".jpeg", ".png", ".heic", ".heif", ".avif")):
                    seeds.append(os.path.join(base, name))
    seeds = [s for s in seeds if os.path.getsize(s) < 8 << 20]
    if args.only:
        seeds = [s for s in seeds if os.path.splitext(s)[1].lower().lstrip(".") in args.only.split(",")]
    if not seeds:
        sys.exit("fuzz: no photo seeds found (JPEG, PNG, HEIC, HEIF, AVIF)")
    rng = random.Random(args.seed)
    findings = os.path.join(root, "fuzz", "findings")
    work = tempfile.mkdtemp(prefix="darkroom-fuzz-")
    config = os.path.join(work, "pipeline.json")
    with open(config, "w") as f:
        f.write('{"spool": {"root": "%s/spool"}, "library": {"root": "%s/lib"}, "catalog": {"path": "%s/c.sqlite"}}' % (work, work, work))
    deadline = time.monotonic() + args.seconds
    cases = failures = 0
    slowest = 0.0
    largest = 0.0
    try:
        while time.monotonic() < deadline:
            seed_path = rng.choice(seeds)
            with open(seed_path, "rb") as f:
                mutant = mutate(f.read(), rng)
            ext = os.path.splitext(seed_path)[1].lower()
            case = os.path.join(work, "case" + ext)
            with open(case, "wb") as f:
                f.write(mutant)
            for cmd in ([args.binary, "inspect", case, "--config", config],
                        [args.binary, "render", case, "--out", os.path.join(work, "out"), "--config", config]):
                status, seconds, err, megabytes = run(cmd, args.timeout)
                slowest = max(slowest, seconds)
                largest = max(largest, megabytes)
                if status is None or status < 0 or status > 2 or megabytes > args.memory_mb:
                    failures += 1
                    os.makedirs(findings, exist_ok=True)
                    kept = os.path.join(findings, "%d-%d%s" % (args.seed, cases, ext))
                    shutil.copy(case, kept)
                    what = ("hang" if status is None else "%.0f MB resident" % megabytes
                            if megabytes > args.memory_mb else "exit %s" % status)
                    print("fuzz: %s on %s (%s from %s): %s" % (what, cmd[1], kept, os.path.basename(seed_path), err.decode(errors="replace")), flush=True)
            cases += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("fuzz: %d mutants (seed %d, %d seed files) in %.0f s: %d findings; slowest command %.2f s, largest %.0f MB resident"
          % (cases, args.seed, len(seeds), args.seconds, failures, slowest, largest))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if "--http" in sys.argv[1:]:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import http_fuzz
        http_fuzz.main(sys.argv[1:])
    else:
        main()
