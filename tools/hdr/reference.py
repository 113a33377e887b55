#!/usr/bin/env python3
"""Reference HDR-to-SDR rendering of a PQ or HLG AVIF, for Darkroom's HDR test.

An independent implementation, in float64 with numpy, of the operator that CHEIF's
dr_hdr_to_sdr runs (Sources/CHEIF/tonemap.c), written from the recommendations themselves:

  decode   libavif's avifdec (dav1d) to Y4M, then full- or limited-range Y'CbCr to R'G'B' with
           the file's matrix coefficients (not libheif, which the product uses);
  linear   SMPTE ST 2084 (PQ) EOTF in cd/m2; or HLG's inverse OETF and BT.2100's OOTF for a
           1000 cd/m2 display (gamma 1.2);
  tone     ITU-R BT.2390's EETF on the luminance (PQ domain, Hermite knee at 1.5 maxLum - 0.5),
           from the content's MaxCLL (clli box; else 1000) to 203 cd/m2 (BT.2408 reference
           white shown as SDR white), every channel scaled by the same factor;
  gamut    3x3 matrix to sRGB primaries (Bradford to D65 where the white differs), then each
           pixel moved towards its own luminance until inside 0...1;
  encode   sRGB transfer, 8 bits.

It then reduces the rendering to the preview's size (contain 1024x1024) by area averaging and
prints the Rec.601 luma figures the test compares with (mean, min, max, percentiles), as JSON.

Usage: tools/hdr/reference.py FILE.avif [--box 1024]
Needs: numpy (PyPI), avifdec (Debian's libavif-bin).
"""
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np

PRIMARIES = {
    1: (0.64, 0.33, 0.30, 0.60, 0.15, 0.06, 0.3127, 0.3290),
    9: (0.708, 0.292, 0.170, 0.797, 0.131, 0.046, 0.3127, 0.3290),
    11: (0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.314, 0.351),
    12: (0.680, 0.320, 0.265, 0.690, 0.150, 0.060, 0.3127, 0.3290),
}
MATRIX_KR_KB = {1: (0.2126, 0.0722), 5: (0.299, 0.114), 6: (0.299, 0.114), 9: (0.2627, 0.0593)}
SDR_WHITE = 203.0

M1, M2 = 2610 / 16384, 2523 / 4096 * 128
C1, C2, C3 = 3424 / 4096, 2413 / 4096 * 32, 2392 / 4096 * 32


def pq_eotf(e):
    p = np.power(np.clip(e, 0, None), 1 / M2)
    return 10000 * np.power(np.clip(p - C1, 0, None) / (C2 - C3 * p), 1 / M1)


def pq_inverse(nits):
    y = np.power(np.clip(nits, 0, None) / 10000, M1)
    return np.power((C1 + C2 * y) / (1 + C3 * y), M2)


def hlg_inverse_oetf(e):
    a = 0.17883277
    b = 1 - 4 * a
    c = 0.5 - a * np.log(4 * a)
    e = np.clip(e, 0, 1)
    return np.where(e <= 0.5, e * e / 3, (np.exp((e - c) / a) + b) / 12)


def eetf(nits, source_peak, target_peak=SDR_WHITE):
    """ITU-R BT.2390 EETF, black levels 0."""
    if source_peak <= target_peak:
        return np.minimum(nits, target_peak)
    source_pq = pq_inverse(source_peak)
    e1 = np.minimum(pq_inverse(nits) / source_pq, 1)
    max_lum = pq_inverse(target_peak) / source_pq
    ks = 1.5 * max_lum - 0.5
    t = (e1 - ks) / (1 - ks)
    spline = (2 * t**3 - 3 * t**2 + 1) * ks + (t**3 - 2 * t**2 + t) * (1 - ks) + (-2 * t**3 + 3 * t**2) * max_lum
    e2 = np.where(e1 > ks, spline, e1)
    return pq_eotf(e2 * source_pq)


def rgb_to_xyz(p):
    rx, ry, gx, gy, bx, by, wx, wy = p
    m = np.array([[rx / ry, gx / gy, bx / by], [1, 1, 1], [(1 - rx - ry) / ry, (1 - gx - gy) / gy, (1 - bx - by) / by]])
    white = np.array([wx / wy, 1, (1 - wx - wy) / wy])
    return m * np.linalg.solve(m, white)


def to_srgb_matrix(p):
    source = rgb_to_xyz(p)
    srgb = PRIMARIES[1]
    if abs(p[6] - srgb[6]) > 1e-4 or abs(p[7] - srgb[7]) > 1e-4:
        bradford = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])
        w_from = np.array([p[6] / p[7], 1, (1 - p[6] - p[7]) / p[7]])
        w_to = np.array([srgb[6] / srgb[7], 1, (1 - srgb[6] - srgb[7]) / srgb[7]])
        adapt = np.linalg.inv(bradford) @ np.diag((bradford @ w_to) / (bradford @ w_from)) @ bradford
        source = adapt @ rgb_to_xyz(p)
    return np.linalg.inv(rgb_to_xyz(srgb)) @ source, rgb_to_xyz(p)[1]


def boxes(data, kind):
    """The payloads of every box named `kind` (a flat scan: enough for colr and clli)."""
    found, start = [], 0
    while True:
        i = data.find(kind, start)
        if i < 4:
            return found
        size = struct.unpack(">I", data[i - 4:i])[0]
        found.append(data[i + 4:i - 4 + size])
        start = i + 4


def read_y4m(path):
    with open(path, "rb") as f:
        raw = f.read()
    header_end = raw.index(b"\n")
    fields = raw[:header_end].split()
    width = int([x for x in fields if x.startswith(b"W")][0][1:])
    height = int([x for x in fields if x.startswith(b"H")][0][1:])
    colour = [x for x in fields if x.startswith(b"C")][0][1:].decode()
    limited = b"XCOLORRANGE=LIMITED" in fields
    frame = raw.index(b"FRAME", header_end) + 6
    bits = int(colour.split("p")[1]) if "p" in colour and colour.split("p")[1].isdigit() else 8
    dtype = np.uint16 if bits > 8 else np.uint8
    if not colour.startswith("444"):
        raise SystemExit(f"reference: only 4:4:4 is handled here, the file is {colour}")
    planes = np.frombuffer(raw[frame:frame + width * height * 3 * dtype().itemsize], dtype=dtype)
    return planes.reshape(3, height, width).astype(np.float64), bits, limited


def render(path, box):
    data = open(path, "rb").read()
    colr = [c for c in boxes(data, b"colr") if c[:4] == b"nclx"]
    if not colr:
        raise SystemExit("reference: no nclx colr box")
    primaries, transfer, matrix = struct.unpack(">HHH", colr[0][4:10])
    clli = boxes(data, b"clli")
    max_cll = struct.unpack(">H", clli[0][:2])[0] if clli else 0
    with tempfile.TemporaryDirectory() as directory:
        y4m = os.path.join(directory, "frame.y4m")
        subprocess.run(["avifdec", path, y4m], check=True, capture_output=True)
        (yp, cb, cr), bits, limited = read_y4m(y4m)
    top = (1 << bits) - 1
    if limited:
        scale = top / 255.0
        y = (yp - 16 * scale) / (219 * scale)
        cb, cr = (cb - 128 * scale) / (224 * scale), (cr - 128 * scale) / (224 * scale)
    else:
        y, cb, cr = yp / top, (cb - (top + 1) / 2) / top, (cr - (top + 1) / 2) / top
    kr, kb = MATRIX_KR_KB[matrix]
    kg = 1 - kr - kb
    r = y + 2 * (1 - kr) * cr
    b = y + 2 * (1 - kb) * cb
    g = (y - kr * r - kb * b) / kg
    signal = np.clip(np.stack([r, g, b], axis=-1), 0, 1)
    # Quantised to the decode's code values, as a decoder hands them over.
    signal = np.round(signal * top) / top

    to_srgb, luma = to_srgb_matrix(PRIMARIES[primaries])
    if transfer == 16:
        peak = float(max_cll) if max_cll > 0 else 1000.0
        light = pq_eotf(signal)
        lum = light @ luma
        gain = np.where(lum > 0, eetf(lum, peak) / np.where(lum > 0, lum, 1), 1) / SDR_WHITE
    elif transfer == 18:
        peak = 1000.0
        light = hlg_inverse_oetf(signal)
        ys = light @ luma
        display = peak * np.power(ys, 1.2)
        gain = np.where(ys > 0, eetf(display, peak) / np.where(ys > 0, ys, 1), 0) / SDR_WHITE
    else:
        raise SystemExit(f"reference: transfer {transfer} is neither PQ (16) nor HLG (18)")
    s = (light @ to_srgb.T) * gain[..., None]
    lum = s @ np.array([0.2126, 0.7152, 0.0722])
    lo, hi = s.min(axis=-1), s.max(axis=-1)
    t = np.ones_like(lum)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(lo < 0, lum / (lum - lo), t)
        t = np.where(hi > 1, np.minimum(t, (1 - lum) / (hi - lum)), t)
    t = np.nan_to_num(t, nan=1.0)
    s = lum[..., None] + t[..., None] * (s - lum[..., None])
    s = np.where((lum >= 1)[..., None], 1.0, np.where((lum <= 0)[..., None], 0.0, s))
    s = np.clip(s, 0, 1)
    encoded = np.where(s <= 0.0031308, 12.92 * s, 1.055 * np.power(s, 1 / 2.4) - 0.055)
    sdr = np.round(encoded * 255)

    height, width = sdr.shape[:2]
    k = min(1.0, box / width, box / height)
    out_w, out_h = max(1, round(width * k)), max(1, round(height * k))
    preview = area_resize(sdr, out_w, out_h)
    preview = np.clip(np.round(preview), 0, 255)
    luma8 = preview @ np.array([0.299, 0.587, 0.114])
    return {
        "file": os.path.basename(path), "primaries": primaries, "transfer": transfer, "matrix": matrix,
        "bits": bits, "max_content_light": max_cll, "source_peak": peak, "sdr_white": SDR_WHITE,
        "width": out_w, "height": out_h,
        "luma_mean": round(float(luma8.mean()), 2),
        "luma_min": round(float(luma8.min()), 2), "luma_max": round(float(luma8.max()), 2),
        "luma_percentiles": {str(p): round(float(np.percentile(luma8, p)), 2) for p in (1, 5, 50, 95, 99)},
    }


def area_weights(source, target):
    """target x source matrix: each output pixel the mean of the source span it covers."""
    edges = np.arange(target + 1) * source / target
    w = np.zeros((target, source))
    for i in range(target):
        a, b = edges[i], edges[i + 1]
        first, last = int(np.floor(a)), min(int(np.ceil(b)), source)
        for j in range(first, last):
            w[i, j] = min(b, j + 1) - max(a, j)
        w[i] /= w[i].sum()
    return w


def area_resize(img, out_w, out_h):
    wy = area_weights(img.shape[0], out_h).astype(np.float32)
    wx = area_weights(img.shape[1], out_w).astype(np.float32)
    return np.stack([wy @ img[..., c].astype(np.float32) @ wx.T for c in range(3)], axis=-1)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    box = int(sys.argv[sys.argv.index("--box") + 1]) if "--box" in sys.argv else 1024
    print(json.dumps(render(sys.argv[1], box), indent=2))
