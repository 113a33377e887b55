#!/usr/bin/env python3
"""HTTP request fuzzing of a live `darkroom serve` (loopback, workers on).

Sends seeded mutations of well-formed requests (raw and multipart uploads with their fields,
declarations of places and moments with JSON bodies, queries of the read API, media paths,
status polls) over raw sockets: bytes flipped and cut, header lines duplicated, dropped or
given lying lengths, control bytes and NULs in fields, duplicate JSON keys, numbers in other
bases, impossible times, chunked framing broken. After every request the server must still
answer `GET /healthz`; a finding is any of: the process ending, an answer of 500 (a fault of
Darkroom, not of the request), an answer slower than the time limit, or a resident size above
the memory limit. Findings are kept under fuzz/findings/ (the raw request) and the run ends
with status 1.

  fuzz/http_fuzz.py --binary .build/release/darkroom --seconds 120 [--seed N] [--memory-mb N]
  (also: fuzz/fuzz.py --http ...)
"""
import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time

TOKEN = "fuzz-token"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(method, path, body=b"", headers=None, token=True, chunked=False):
    lines = ["%s %s HTTP/1.1" % (method, path), "Host: 127.0.0.1", "Connection: close"]
    if token:
        lines.append("Authorization: Bearer " + TOKEN)
    for name, value in (headers or []):
        lines.append("%s: %s" % (name, value))
    if chunked:
        lines.append("Transfer-Encoding: chunked")
        body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
    elif body or method in ("POST", "PUT"):
        lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def seeds(photo):
    """Well-formed requests, each a starting point for mutations."""
    boundary = "fuzzboundary"
    form = (("--%s\r\nContent-Disposition: form-data; name=\"author_id\"\r\n\r\nalice\r\n"
             "--%s\r\nContent-Disposition: form-data; name=\"taken_at\"\r\n\r\n2024-05-07T09:33:04+08:00\r\n"
             "--%s\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n")
            % (boundary, boundary, boundary)).encode() + photo + ("\r\n--%s--\r\n" % boundary).encode()
    place = json.dumps({"lat": 48.85, "long": 2.35, "rad": 300, "name": "quai"}).encode()
    moment = json.dumps({"place_id": 1, "start": "2024-05-07T18:00:00+02:00", "end": "2024-05-07T20:00:00+02:00",
                         "creator": "alice", "visibility": "private", "invitees": ["bob"], "title": "t"}).encode()
    json_headers = [("Content-Type", "application/json")]
    return [
        request("POST", "/v1/uploads?author_id=alice&title=Quai&latitude=48.85&longitude=2.35&taken_at=2024-05-07T09:33:04%2B08:00",
                photo, [("Content-Type", "image/jpeg")]),
        request("POST", "/v1/uploads", form, [("Content-Type", "multipart/form-data; boundary=" + boundary)]),
        request("POST", "/v1/uploads", photo, [("Content-Type", "image/jpeg")], chunked=True),
        request("POST", "/v1/places", place, json_headers),
        request("POST", "/v1/moments", moment, json_headers),
        request("PUT", "/v1/moments/1/cover", b'{"picture_id": 1, "user": "alice"}', json_headers),
        request("GET", "/v1/places/around?lat=48.85&long=2.35&rad=1000"),
        request("GET", "/v1/moments/1/pictures?limit=10&after=abc"),
        request("GET", "/v1/pictures/1"),
        request("GET", "/v1/uploads/u_0000000000000000?wait=0.1"),
        request("GET", "/v1/media/variants/thumb/ab/cd/" + "ab" * 32 + ".jpg", headers=[("Range", "bytes=0-10")]),
        request("HEAD", "/v1/media/variants/thumb/ab/cd/" + "ab" * 32 + ".jpg"),
        request("GET", "/healthz/ready"),
    ]


HOSTILE = [b"\x00", b"%00", b"\r\n", b"\n", b"%0A", b"\\u0000", b"0x10", b"1e308", b"-0", b"nan", b"+99:99",
           b"2024-02-30T00:00:00Z", b"2016-12-31T23:59:60Z", b"10000-01-01T00:00:00Z", b"\xff\xfe", b"\xe9",
           b"../../etc/passwd", b"%2e%2e%2f", b"A" * 70000, b'", "lat": 1, "lat": "', b"}", b"{", b"[", b"9" * 40]


def mutate(data, rng):
    b = bytearray(data)
    head_end = bytes(b).find(b"\r\n\r\n")
    for _ in range(rng.randint(1, 3)):
        kind = rng.randrange(8)
        if not b:
            break
        if kind == 0:  # bit flips anywhere
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(b))
                b[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # truncation
            del b[rng.randrange(len(b)):]
        elif kind == 2 and head_end > 0:  # a hostile value spliced into the head (a path, a query, a header)
            i = rng.randrange(head_end)
            b[i:i] = rng.choice(HOSTILE)
        elif kind == 3 and head_end > 0:  # a hostile value in the body (a field, a JSON string)
            i = rng.randrange(head_end + 4, len(b)) if len(b) > head_end + 4 else len(b)
            b[i:i] = rng.choice(HOSTILE)
        elif kind == 4 and head_end > 0:  # a header line duplicated or dropped
            lines = bytes(b[:head_end]).split(b"\r\n")
            if len(lines) > 2:
                j = rng.randrange(1, len(lines))
                if rng.random() < 0.5:
                    lines.insert(j, lines[j])
                else:
                    del lines[j]
                b[:head_end] = b"\r\n".join(lines)
        elif kind == 5 and head_end > 0:  # a lying Content-Length
            head = bytes(b[:head_end])
            i = head.find(b"Content-Length: ")
            if i >= 0:
                j = head.find(b"\r\n", i)
                j = len(head) if j < 0 else j
                lie = rng.choice([b"0", b"-1", b"1", b"99999999999999999999", b"1000000000", b"0x10", b" 5", b"5, 6"])
                b[i + 16:j] = lie
        elif kind == 6:  # broken chunked framing
            i = bytes(b).find(b"\r\n\r\n")
            if i >= 0 and b"chunked" in bytes(b[:i]):
                b[i + 4:i + 6] = rng.choice([b"zz", b"ffffffffffffffffff", b"\n", b"-1"])
        else:  # a JSON key repeated
            i = bytes(b).find(b'{"')
            if i >= 0:
                j = bytes(b).find(b",", i)
                if j > i:
                    b[j:j] = b"," + bytes(b[i + 1:j])
    return bytes(b)


def exchange(port, data, timeout):
    """Sends data; the answer's status (None when none came), its seconds."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        try:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass  # refused mid-body: the answer may still have come
        answer = b""
        try:
            while b"\r\n" not in answer:
                chunk = s.recv(4096)
                if not chunk:
                    break
                answer += chunk
        except socket.timeout:
            return None, time.monotonic() - started
        except OSError:
            pass
    parts = answer.split(b" ", 2)
    status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    return status, time.monotonic() - started


def resident_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main(argv=None):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", action="store_true", help="(this mode; accepted for fuzz.py --http)")
    parser.add_argument("--binary", default=os.path.join(root, ".build/release/darkroom"))
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--timeout", type=float, default=10, help="per request")
    parser.add_argument("--memory-mb", type=float, default=1024, help="resident size of serve")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args(argv)

    with open(os.path.join(root, "samples", "hopper.jpg"), "rb") as f:
        photo = f.read()
    rng = random.Random(args.seed)
    findings = os.path.join(root, "fuzz", "findings")
    work = tempfile.mkdtemp(prefix="darkroom-http-fuzz-")
    port = free_port()
    config = os.path.join(work, "pipeline.json")
    with open(config, "w") as f:
        json.dump({"spool": {"root": work + "/spool"}, "library": {"root": work + "/lib"},
                   "catalog": {"path": work + "/c.sqlite"}, "server": {"port": port, "token": TOKEN}}, f)
    log = open(os.path.join(work, "serve.log"), "wb")
    serve = subprocess.Popen([args.binary, "serve", "--config", config], stdout=log, stderr=subprocess.STDOUT,
                             env=dict(os.environ, SWIFT_BACKTRACE="enable=no"))
    health = request("GET", "/healthz")
    for _ in range(200):
        try:
            if exchange(port, health, 1)[0] == 200:
                break
        except OSError:
            time.sleep(0.05)
    else:
        serve.kill()
        sys.exit("http fuzz: serve did not start (see %s)" % log.name)

    base = seeds(photo)
    deadline = time.monotonic() + args.seconds
    cases = failures = 0
    slowest = 0.0
    largest = 0.0
    statuses = {}

    def finding(what, data):
        nonlocal failures
        failures += 1
        os.makedirs(findings, exist_ok=True)
        kept = os.path.join(findings, "http-%d-%d.request" % (args.seed, cases))
        with open(kept, "wb") as f:
            f.write(data)
        print("http fuzz: %s (%s)" % (what, kept), flush=True)

    try:
        while time.monotonic() < deadline:
            data = mutate(rng.choice(base), rng)
            try:
                status, seconds = exchange(port, data, args.timeout)
            except OSError as error:
                status, seconds = -1, 0.0
                if serve.poll() is None:
                    status = 0  # the connection was refused or reset: an answer of its own
                else:
                    finding("serve ended (%s) after %s" % (serve.returncode, error), data)
                    break
            statuses[status] = statuses.get(status, 0) + 1
            slowest = max(slowest, seconds)
            if status is None:
                finding("no answer within %.0f s" % args.timeout, data)
            elif status == 500:
                finding("500 (a fault of Darkroom)", data)
            if serve.poll() is not None:
                finding("serve ended with status %s" % serve.returncode, data)
                break
            try:
                alive, _ = exchange(port, health, args.timeout)
            except OSError:
                alive = None
            if alive != 200:
                finding("/healthz answered %s after this request" % alive, data)
            megabytes = resident_mb(serve.pid)
            largest = max(largest, megabytes)
            if megabytes > args.memory_mb:
                finding("serve at %.0f MB resident" % megabytes, data)
                break
            cases += 1
    finally:
        if serve.poll() is None:
            serve.terminate()
            try:
                serve.wait(30)
            except subprocess.TimeoutExpired:
                serve.kill()
                finding("serve did not stop within 30 s of SIGTERM", b"")
        log.close()
        if failures:
            shutil.copy(log.name, os.path.join(findings, "http-%d-serve.log" % args.seed))
        shutil.rmtree(work, ignore_errors=True)
    print("http fuzz: %d requests (seed %d) in %.0f s: %d findings; statuses %s; slowest %.2f s, largest %.0f MB resident"
          % (cases, args.seed, args.seconds, failures, dict(sorted((str(k), v) for k, v in statuses.items())), slowest, largest))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
