#!/usr/bin/env bash
# Schemathesis against a live `darkroom serve`: every check (`--checks all`) on every route of
# Sources/HTTPService/openapi.json, with a fixed seed and a bounded number of cases per route, so
# that a run is repeatable and short. Exits non-zero on any failure.
#
#   tools/schemathesis/run.sh [DARKROOM_BINARY]
#
# DARKROOM_BINARY: the `darkroom` to serve (default: .build/debug/darkroom).
# SCHEMATHESIS: the `st` command (default: `st` on PATH when it is this version, else
# Schemathesis installed from PyPI once under $XDG_CACHE_HOME/darkroom/schemathesis-VERSION).
# ST_SCHEMA: the document tested (default: the one the server serves at /openapi.json).
# ST_MAX_EXAMPLES (default 30), ST_SEED (default 20261127), ST_PHASES (default all four):
# the size, seed and phases of the run.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
binary=${1:-$repo/.build/debug/darkroom}
version=4.32.5
[ -x "$binary" ] || { echo "schemathesis: no darkroom binary at $binary; build first or pass its path" >&2; exit 2; }

# Schemathesis itself: this exact version (the seed draws the same cases only with it), from PyPI
# once into a cache with pip's --target, which needs neither venv nor a writable system Python
# (PEP 668). Installed into a folder of its own first and renamed into place, so that an
# interrupted install is never taken for one.
st=${SCHEMATHESIS:-}
if [ -z "$st" ]; then
    if command -v st >/dev/null 2>&1 && st --version 2>/dev/null | grep -q "version $version\$"; then
        st=st
    else
        cache=${XDG_CACHE_HOME:-$HOME/.cache}/darkroom/schemathesis-$version
        if [ ! -x "$cache/st" ]; then
            python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' || {
                echo "schemathesis: Schemathesis $version needs Python 3.11 or later; python3 is $(python3 --version 2>&1)" >&2; exit 2; }
            echo "schemathesis: installing Schemathesis $version from PyPI into $cache"
            mkdir -p "$(dirname "$cache")"
            staged=$(mktemp -d "$cache.partial.XXXXXX")
            PIP_ROOT_USER_ACTION=ignore python3 -m pip install --quiet --disable-pip-version-check --no-warn-script-location \
                --target "$staged/lib" "schemathesis==$version" || { rm -rf "$staged"; echo "schemathesis: pip could not install schemathesis==$version" >&2; exit 2; }
            python=$(python3 -c 'import sys; print(sys.executable)')
            printf '#!/bin/sh\nPYTHONPATH="%s/lib" exec "%s" -m schemathesis.cli "$@"\n' "$cache" "$python" > "$staged/st"
            chmod +x "$staged/st"
            # Another run may have installed it meanwhile: keep that one.
            mv -T "$staged" "$cache" 2>/dev/null || rm -rf "$staged"
        fi
        st=$cache/st
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
# hooks.py: the sample photos an upload's file part is drawn from, and the few ST202 failures
# the document cannot prevent, dropped one by one (its docstring says which and why).
schema=${ST_SCHEMA:-$base/openapi.json}
[ -f "$schema" ] && schema=$(realpath "$schema")
reports=$(realpath -m "${ST_REPORT_DIR:-$work/report}")
# Run from the temporary directory: Schemathesis keeps a .schemathesis/ cache where it runs.
(cd "$work" && SCHEMATHESIS_HOOKS=$here/hooks.py "$st" --no-color run "$schema" --url "$base" \
    --header "Authorization: Bearer $token" \
    --checks all \
    --seed "${ST_SEED:-20261127}" \
    --max-examples "${ST_MAX_EXAMPLES:-30}" \
    --phases "${ST_PHASES:-examples,coverage,fuzzing,stateful}" \
    --request-timeout 30 \
    --generation-database none \
    --report junit --report-dir "$reports" \
    --suppress-health-check all) || status=$?
echo "schemathesis: $(( $(date +%s) - started )) s against serve on port $port (exit $status)"
if ! kill -0 "$pid" 2>/dev/null; then
    echo "schemathesis: serve died during the run:" >&2; tail -50 "$work/serve.log" >&2; exit 1
fi
exit $status
