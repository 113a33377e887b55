#!/usr/bin/env bash
# Schemathesis against a live `darkroom serve`: every check (`--checks all`) on every route of
# Sources/HTTPService/openapi.json, with a fixed seed and a bounded number of cases per route, so
# that a run is repeatable and short. Exits non-zero on any failure.
#
#   tools/schemathesis/run.sh [DARKROOM_BINARY]
#
# DARKROOM_BINARY: the `darkroom` to serve (default: .build/debug/darkroom).
# SCHEMATHESIS: the `st` command (default: `st` on PATH, else a virtual environment made once
# under $XDG_CACHE_HOME/darkroom/schemathesis with Schemathesis from PyPI).
# ST_SCHEMA: the document tested (default: the one the server serves at /openapi.json).
# ST_MAX_EXAMPLES (default 30), ST_SEED (default 20261127), ST_PHASES (default all four):
# the size, seed and phases of the run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
binary=${1:-$repo/.build/debug/darkroom}
version=4.32.5
[ -x "$binary" ] || { echo "schemathesis: no darkroom binary at $binary; build first or pass its path" >&2; exit 2; }

st=${SCHEMATHESIS:-}
if [ -z "$st" ]; then
    if command -v st >/dev/null 2>&1 && st --version 2>/dev/null | grep -q "version 4\."; then
        st=st
    else
        venv=${XDG_CACHE_HOME:-$HOME/.cache}/darkroom/schemathesis-$version
        if [ ! -x "$venv/bin/st" ]; then
            python3 -m venv "$venv"
            "$venv/bin/pip" install --quiet "schemathesis==$version"
        fi
        st=$venv/bin/st
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/darkroom-schemathesis.XXXXXX")
pid=
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid"; wait "$pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

token=schemathesis-$RANDOM$RANDOM
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$work/pipeline.json" <<JSON
{"spool": {"root": "$work/spool", "settle_seconds": 0},
 "library": {"root": "$work/library"},
 "catalog": {"path": "$work/catalog.sqlite"},
 "server": {"host": "127.0.0.1", "port": $port, "admin_port": 0, "token": "$token"}}
JSON
"$binary" serve --config "$work/pipeline.json" >"$work/serve.log" 2>&1 &
pid=$!
base=http://127.0.0.1:$port
for _ in $(seq 1 100); do
    curl -sf -o /dev/null -H "Authorization: Bearer $token" "$base/healthz/ready" && break
    kill -0 "$pid" 2>/dev/null || { echo "schemathesis: serve stopped at its start:" >&2; cat "$work/serve.log" >&2; exit 2; }
    sleep 0.1
done

# A place, a moment there, and a picture in it: what the links from them lead to exists, so
# that the stateful phase and the positive cases reach the 200 answers too.
curl -sf -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"id": 1, "lat": 51.5, "long": -0.12, "rad": 500, "name": "Fixture"}' "$base/v1/places"
curl -sf -o /dev/null -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"id": 1, "place_id": 1, "start": "2024-01-01T00:00:00Z", "end": "2024-12-31T00:00:00Z"}' "$base/v1/moments"
sample=$repo/samples/Apple_iPhone_6.jpg
if [ -f "$sample" ]; then
    id=$(curl -sf -H "Authorization: Bearer $token" --data-binary @"$sample" "$base/v1/uploads?moment_id=1" \
        | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')
    curl -sf -o /dev/null -H "Authorization: Bearer $token" "$base/v1/uploads/$id?wait=30"
fi

started=$(date +%s)
status=0
# ST_SCHEMA: a document to test instead of the one served (the source's, while it is edited).
"$st" --no-color run "${ST_SCHEMA:-$base/openapi.json}" --url "$base" \
    --header "Authorization: Bearer $token" \
    --checks all \
    --seed "${ST_SEED:-20261127}" \
    --max-examples "${ST_MAX_EXAMPLES:-30}" \
    --phases "${ST_PHASES:-examples,coverage,fuzzing,stateful}" \
    --request-timeout 30 \
    --generation-database none \
    --report junit --report-dir "${ST_REPORT_DIR:-$work/report}" \
    --suppress-health-check all || status=$?
echo "schemathesis: $(( $(date +%s) - started )) s against serve on port $port (exit $status)"
if ! kill -0 "$pid" 2>/dev/null; then
    echo "schemathesis: serve died during the run:" >&2; tail -50 "$work/serve.log" >&2; exit 1
fi
exit $status
