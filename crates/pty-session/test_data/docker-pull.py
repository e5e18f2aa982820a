#!/usr/bin/env python3
"""Writes docker-pull.raw: what `docker pull` draws on a terminal for an image of three
layers, byte for byte as its CLI's jsonmessage code writes it (no docker daemon can run
on the machines the tests were written on, so this is not a recording).

For each progress message of a layer: a new layer first gets a line ("\\n"); then the
cursor goes up to the layer's row (ESC[nA), the row is erased (ESC[2K), "\\r", the text
and "\\r" are written, and the cursor goes back down (ESC[nB). Messages without a layer
("Digest: ...") are plain lines.

usage: docker-pull.py > docker-pull.raw
"""
import sys

LAYERS = ["6e909acdb790", "5c4a7b8e2d1f", "9b2d3c4e5f60"]
SIZES = [29.5, 12.1, 3.2]
ids = {}
out = []


def bar(done, total):
    width = 50
    filled = int(width * done / total)
    arrow = ">" if filled < width else ""
    return f"[{'=' * filled}{arrow}{' ' * (width - filled - len(arrow))}]  {done:.1f}MB/{total:.1f}MB"


def progress(layer, text):
    if layer not in ids:
        ids[layer] = len(ids)
        out.append("\n")
    diff = len(ids) - ids[layer]
    out.append(f"\x1b[{diff}A")
    out.append(f"\x1b[2K\r{layer}: {text}\r")
    out.append(f"\x1b[{diff}B")


def plain(text):
    ids.clear()
    out.append(f"{text}\n")


plain("latest: Pulling from library/ubuntu")
for layer in LAYERS:
    progress(layer, "Pulling fs layer ")
for step in range(1, 11):
    for layer, size in zip(LAYERS, SIZES):
        progress(layer, "Downloading " + bar(size * step / 10, size))
for layer, size in zip(LAYERS, SIZES):
    progress(layer, "Verifying Checksum ")
    progress(layer, "Download complete ")
for layer, size in zip(LAYERS, SIZES):
    for step in range(1, 6):
        progress(layer, "Extracting " + bar(size * step / 5, size))
    progress(layer, "Pull complete ")
plain("Digest: sha256:80dd3c3b9c6cecb9f1667e9290b3bc61b78c2678c02cbdae5f0fea92cc6734ab")
plain("Status: Downloaded newer image for ubuntu:latest")
plain("docker.io/library/ubuntu:latest")
# The terminal's ONLCR turns each "\n" into "\r\n".
sys.stdout.buffer.write("".join(out).replace("\n", "\r\n").encode())
