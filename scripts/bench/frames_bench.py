#!/usr/bin/env python3
"""One frame against several: how often a single camera frame reads a card's number right or
wrong, and how often the frames' vote (capture-cli scan --frames, the hosted page's camera rule)
does, on clips made from a labelled set's cards (scripts/camera_clips.py: moving, some frames
blurred, some with glare), each frame a 1000-pixel-wide JPEG as the page sends it.

    python3 scripts/bench/frames_bench.py --cli .build/release/capture-cli --set .devsets/gen2 --cards 40

Prints, per category and overall: frames right, wrong and without a number; clips whose vote
was right, wrong or took nothing; frames until the vote took the number (median, p90); and the
time of a frame as the camera reads it (one worker: the first pass alone, the whole scan within
1.5 s after a frame the first pass read no number on; median, p90).
"""

import argparse
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import camera_clips  # noqa: E402


def percentile(values, fraction):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(fraction * (len(values) - 1))))] if values else None


def timed_scan(cli, options, paths):
    """{path: (status, ms)} of one worker's scans of `paths` with `options`."""
    run = subprocess.run([cli, "scan", "--json", "--jobs", "1"] + options + paths, capture_output=True, text=True)
    lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    return {line["file"]: (line.get("status"), line.get("ms", 0)) for line in lines}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cli", required=True)
    parser.add_argument("--set", required=True, help="a folder with pictures and manifest.json (file, pan, kind)")
    parser.add_argument("--cards", type=int, default=40)
    parser.add_argument("--frames", type=int, default=8)
    parser.add_argument("--whole", action="store_true",
                        help="vote over frames each read by the whole scan (as before the camera read most by the first pass)")
    arguments = parser.parse_args()
    manifest = json.load(open(os.path.join(arguments.set, "manifest.json")))
    cards = [entry for entry in sorted(manifest, key=lambda e: e["file"]) if entry.get("pan")][: arguments.cards]
    folder = tempfile.mkdtemp(prefix="frames-bench-")
    clips = []
    for index, card in enumerate(cards):
        from PIL import Image
        picture = Image.open(os.path.join(arguments.set, card["file"])).convert("RGB")
        paths = []
        for number, frame in enumerate(camera_clips.frames(picture, index + 1, arguments.frames)):
            path = os.path.join(folder, "%03d-%02d.jpg" % (index, number))
            frame.resize((1000, int(frame.height * 1000 / frame.width))).save(path, "JPEG", quality=85)
            paths.append(path)
        clips.append((card, paths))
    every = [path for _, paths in clips for path in paths]
    single = subprocess.run([arguments.cli, "scan", "--json", "--reveal"] + every, capture_output=True, text=True)
    readings = {}
    for line in single.stdout.splitlines():
        read = json.loads(line)
        readings[read["file"]] = read.get("pan") if read.get("status") == "found" else None
    frames = collections.defaultdict(collections.Counter)
    votes = collections.defaultdict(collections.Counter)
    accepted_after = []
    for card, paths in clips:
        groups = ["all", card.get("kind", "?")]
        for path in paths:
            read = readings.get(path)
            outcome = "none" if read is None else "right" if read == card["pan"] else "wrong"
            for group in groups:
                frames[group][outcome] += 1
        # A time budget longer than any scan reads every frame by the whole scan.
        whole = ["--time-budget", "600000"] if arguments.whole else []
        vote = subprocess.run([arguments.cli, "scan", "--frames", "--json", "--reveal"] + whole + paths, capture_output=True, text=True)
        result = json.loads(vote.stdout.splitlines()[-1])
        outcome = "none" if result.get("status") != "found" else "right" if result.get("pan") == card["pan"] else "wrong"
        for group in groups:
            votes[group][outcome] += 1
        if outcome == "right":
            accepted_after.append(result["acceptedAfter"])
    print("%-12s %6s %22s %22s" % ("category", "clips", "single frame r/w/none", "vote r/w/none"))
    for group in sorted(frames, key=lambda g: (g != "all", g)):
        f, v = frames[group], votes[group]
        print("%-12s %6d %8d/%d/%d (%.3f) %10d/%d/%d (%.3f)" % (
            group, sum(v.values()), f["right"], f["wrong"], f["none"], f["right"] / max(1, sum(f.values())),
            v["right"], v["wrong"], v["none"], v["right"] / max(1, sum(v.values()))))
    print("frames until the vote took the number: median %s, p90 %s (of %d per clip)"
          % (percentile(accepted_after, 0.5), percentile(accepted_after, 0.9), arguments.frames))
    # Each frame's time as the camera reads it (CardScanner.forCameraFrame: the first pass alone,
    # the whole scan within 1.5 s after a frame the first pass read no number on), one worker,
    # from the first pass's and the whole scan's reading of every frame.
    every_first = timed_scan(arguments.cli, ["--first-pass"], every)
    every_whole = timed_scan(arguments.cli, ["--time-budget", "1500"], every)
    times = []
    for _, paths in clips:
        missed = False
        for path in paths:
            status, ms = (every_whole if missed else every_first)[path]
            times.append(ms)
            missed = not missed and status != "found"
    print("a frame's time as the camera reads it: median %s ms, p90 %s ms (%d frames, one worker)"
          % (percentile(times, 0.5), percentile(times, 0.9), len(times)))
    shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
