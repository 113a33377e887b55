"""Schemathesis hooks for tools/schemathesis/run.sh (loaded through SCHEMATHESIS_HOOKS).

Two rules of the API relate two fields, which OpenAPI 3.0 has no keyword to state, so a request
valid by the document can break them; the server answers it 400 with a message naming the
field, a 400 the document declares for the operation (and describes). The positive_data_acceptance
check (ST202) counts such a 400 as a schema-valid request refused. `filter_failure` drops exactly
those failures: that check, that operation, a request that does break the rule, and the server's
answer naming it. Every other check and every other refusal of those operations still counts,
so a wrongly refused value (such as the UTC offsets the document once allowed) still fails.

- POST /v1/moments, PUT /v1/moments/{id}: a moment's `end` must not come before its `start`.
- POST /v1/uploads as multipart/form-data: a field may be given in the query string or as a
  form field, not in both ("author_id is given twice").

And one fact a schema cannot describe: the bytes of an upload's `file` part must be a JPEG, PNG,
HEIC, HEIF or AVIF (told by its bytes; 415 otherwise), which the document says as the part's
`encoding` contentType. Schemathesis draws a part of such a type from the strategy registered
for it here (the repository's small sample photos); where it sends other bytes all the same (its
fuzzing phase, or a raw application/octet-stream body), the 415 answering bytes that do not
start as a photo does is dropped too, and a 415 for a real photo still fails.
"""
import atexit
import json
import re
import sys
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import schemathesis
from hypothesis import strategies as st

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
schemathesis.openapi.media_type("image/jpeg", st.just((SAMPLES / "hopper.jpg").read_bytes()))
schemathesis.openapi.media_type("image/png", st.just((SAMPLES / "png_with_exif_and_gps.png").read_bytes()))

MOMENT_OPERATIONS = {"POST /v1/moments", "PUT /v1/moments/{id}"}
TIME = re.compile(r"^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(?:\.(\d+))?(Z|([+-])(\d\d):(\d\d))$")


def _instant(text):
    """The instant an RFC 3339 text names, in microseconds, or None (any Python 3 reads it, unlike fromisoformat)."""
    match = TIME.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    year, month, day, hour, minute, second = (int(match.group(index)) for index in range(1, 7))
    micro = int(((match.group(7) or "") + "000000")[:6])
    offset = 0
    if match.group(8) != "Z":
        offset = (int(match.group(10)) * 60 + int(match.group(11))) * (-1 if match.group(9) == "-" else 1)
    try:
        wall = datetime(year, month, day, hour, minute, second, micro)
    except ValueError:
        return None
    # Microseconds since 0001-01-01T00:00:00Z, which an offset may take before year 1.
    return (wall - datetime(1, 1, 1)) // timedelta(microseconds=1) - offset * 60_000_000


def _error(response):
    try:
        answer = response.json()
    except Exception:
        return None
    return answer.get("error") if isinstance(answer, dict) else None


def _sent(response):
    """The request as sent: its query's field names, its body's bytes, and its parts (name → bytes)
    when it is a multipart form; read from the wire, whatever shape Schemathesis generated."""
    request = response.request
    names = {name for name, _ in parse_qsl(urlsplit(request.url).query, keep_blank_values=True)}
    body = request.body or b""
    body = body.encode("utf-8") if isinstance(body, str) else bytes(body)
    parts = None
    boundary = re.search(r'boundary="?([^";]+)"?', request.headers.get("Content-Type", ""))
    if request.headers.get("Content-Type", "").startswith("multipart/form-data") and boundary:
        parts = {}
        for chunk in body.split(b"--" + boundary.group(1).encode())[1:]:
            head, _, content = chunk.partition(b"\r\n\r\n")
            name = re.search(rb'name="([^"]*)"', head)
            if name:
                parts.setdefault(name.group(1).decode("utf-8", "replace"), content.removesuffix(b"\r\n"))
    return names, body, parts


def _is_photo(data):
    """Whether bytes start as a JPEG, PNG, or an ISO base media file (HEIC, HEIF, AVIF) does."""
    return data.startswith(b"\xff\xd8\xff") or data.startswith(b"\x89PNG\r\n\x1a\n") or data[4:8] == b"ftyp"


def _broken_rule(operation, status, response):
    """The rule above that the request broke, when the response is the server's answer naming it; else None."""
    error = _error(response)
    names, body, parts = _sent(response)
    if operation in MOMENT_OPERATIONS and status == 400:
        try:
            fields = json.loads(body)
        except ValueError:
            return None
        if not isinstance(fields, dict):
            return None
        start, end = _instant(fields.get("start")), _instant(fields.get("end"))
        if start is not None and end is not None and end < start and error == "end must not be before start":
            return "an end before its start"
    if operation == "POST /v1/uploads" and status == 400 and parts is not None:
        if any(error == f"{name} is given twice" for name in names & set(parts)):
            return "a field in both the query and the form"
    if operation == "POST /v1/uploads" and status == 415:
        photo = parts.get("file", b"") if parts is not None else body
        if not _is_photo(photo) and error is not None and error.startswith("not a JPEG, PNG, HEIC, HEIF or AVIF"):
            return "bytes that are no photo"
    return None


DROPPED = Counter()


@atexit.register
def _tell():
    if DROPPED:
        told = ", ".join(f"{count} for {rule}" for rule, count in sorted(DROPPED.items()))
        print(f"schemathesis: hooks.py dropped ST202 failures the document cannot prevent: {told}", file=sys.stderr)


@schemathesis.hook
def filter_failure(context, failure, case, response):
    if getattr(failure, "code", None) != "ST202":
        return True
    rule = _broken_rule(failure.operation, response.status_code, response)
    if rule is not None:
        DROPPED[rule] += 1
    return rule is None
