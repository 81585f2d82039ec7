#!/usr/bin/env python3
"""Trains the learned card-line recognizer (a small CRNN with CTC) and exports it to ONNX.

    train.py --data DIR [DIR ...] --steps N --out model.pt [--onnx Models/card-digits.onnx]
    train.py --resume model.pt --onnx Models/card-digits.onnx --steps 0        # export only

DIRs hold NAME.png + NAME.gt.txt lines (render_lines.py, real_lines.py). The lines are scaled to height 48
once and kept in memory; each step draws a batch of lines of similar width, applies light augmentation
(horizontal stretch, contrast, polarity, noise, extra right padding as the runtime's pad to >= 320 px) and
pads with 0.0 (the runtime's pad value after normalisation). One CPU thread; seeds fixed.
"""
import argparse
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lines  # noqa: E402

NCLASS = 1 + len(lines.CHARS)


class CRNN(nn.Module):
    """Strided conv stack 48 x W -> 1 x W/8 (128 channels), BiLSTM 2 x 96, linear to 13 classes."""

    def __init__(self, hidden: int = 96):
        super().__init__()

        def block(cin, cout, k=3, stride=1, pad=1):
            return [nn.Conv2d(cin, cout, k, stride=stride, padding=pad, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

        # Strided convolutions instead of max-pooling: on one CPU thread pooling costs as much as the convs.
        self.cnn = nn.Sequential(
            *block(3, 32, stride=2),                         # 24 x W/2
            *block(32, 64, stride=2),                        # 12 x W/4
            *block(64, 64),
            *block(64, 96, stride=2),                        # 6 x W/8
            *block(96, 96),
            *block(96, 96, stride=(2, 1)),                   # 3 x W/8
            *block(96, 128, k=(3, 1), pad=0),                # 1 x W/8
        )
        self.rnn = nn.LSTM(128, hidden, batch_first=True, bidirectional=True)
        self.fc = nn.Linear(2 * hidden, NCLASS)

    def forward(self, x):  # x [N, 3, 48, W] -> logits [N, W/8, C]
        f = self.cnn(x).squeeze(2).permute(0, 2, 1).contiguous()
        f, _ = self.rnn(f)
        return self.fc(f)


class Exported(nn.Module):
    """What the ONNX holds: softmax probabilities [1, W/8, C]."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return F.softmax(self.net(x), dim=-1)


# MARK: - Data


def load(dirs: list[Path]) -> list[tuple[np.ndarray, list[int]]]:
    out = []
    for d in dirs:
        n0 = len(out)
        for path, text in lines.read_set(d):
            if not text or any(c not in lines.CHARS for c in text):
                continue
            out.append((lines.scaled_grey(path), lines.encode(text)))
        print(f"{d}: {len(out) - n0} lines", flush=True)
    return out


def augment(rng: random.Random, g: np.ndarray) -> np.ndarray:
    """Light, cheap variation on top of what the renderers already did."""
    if rng.random() < 0.5:  # horizontal stretch
        w = max(8, round(g.shape[1] * rng.uniform(0.8, 1.25)))
        g = np.asarray(Image.fromarray(g).resize((w, lines.HEIGHT), Image.BILINEAR))
    if rng.random() < 0.2:  # vertical shift/scale: shrink and re-pad with the edge rows
        s = rng.uniform(0.75, 1.0)
        h = max(8, round(lines.HEIGHT * s))
        w = max(8, round(g.shape[1] * s))
        small = np.asarray(Image.fromarray(g).resize((w, h), Image.BILINEAR))
        top = rng.randint(0, lines.HEIGHT - h)
        g = np.pad(small, ((top, lines.HEIGHT - h - top), (0, 0)), mode="edge")
    g = g.astype(np.float32)
    if rng.random() < 0.3:
        m = g.mean()
        g = (g - m) * rng.uniform(0.5, 1.4) + m + rng.uniform(-25, 25)
    if rng.random() < 0.15:
        g = 255 - g
    if rng.random() < 0.2:
        g = g + np.random.default_rng(rng.getrandbits(32)).normal(0, rng.uniform(2, 10), g.shape)
    return np.clip(g, 0, 255)


def batch(rng: random.Random, data, idx: list[int], train: bool):
    greys = [augment(rng, data[i][0]) if train else data[i][0].astype(np.float32) for i in idx]
    wmax = max(g.shape[1] for g in greys)
    if train and rng.random() < 0.3:  # as the runtime pads short lines to 320 px
        wmax = max(wmax, rng.choice([lines.runtime_width(wmax), lines.MIN_WIDTH]))
    wmax = -(-wmax // 8) * 8
    x = np.zeros((len(idx), 3, lines.HEIGHT, wmax), np.float32)
    for k, g in enumerate(greys):
        x[k, :, :, : g.shape[1]] = g[None] / 127.5 - 1.0
    targets = [t for i in idx for t in data[i][1]]
    lengths = [len(data[i][1]) for i in idx]
    return torch.from_numpy(x), torch.tensor(targets, dtype=torch.long), torch.tensor(lengths, dtype=torch.long)


def batches_by_width(rng: random.Random, data, size: int):
    """Endless stream of index lists; each batch from a window of similar widths."""
    order = sorted(range(len(data)), key=lambda i: data[i][0].shape[1])
    while True:
        chunks = [order[k : k + size] for k in range(0, len(order), size)]
        rng.shuffle(chunks)
        for c in chunks:
            yield c
        # reshuffle within width neighbours so batches differ each epoch
        order = sorted(range(len(data)), key=lambda i: data[i][0].shape[1] * rng.uniform(0.9, 1.1))


# MARK: - Export


def export(net: CRNN, path: Path) -> None:
    net.to(memory_format=torch.contiguous_format).eval()
    model = Exported(net).eval()
    dummy = torch.zeros(1, 3, lines.HEIGHT, 320)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.onnx.export(
        model, (dummy,), str(path), input_names=["x"], output_names=["probs"], opset_version=17,
        dynamic_axes={"x": {3: "width"}, "probs": {1: "steps"}}, dynamo=False,
    )
    import onnx

    m = onnx.load(str(path))
    onnx.checker.check_model(m)
    print(f"exported {path} ({path.stat().st_size / 1e6:.2f} MB)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, nargs="*", default=[])
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, help="checkpoint to write")
    ap.add_argument("--resume", type=Path, help="checkpoint to start from (weights only)")
    ap.add_argument("--onnx", type=Path, help="export the trained model here")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    net = CRNN()
    print(f"parameters: {sum(p.numel() for p in net.parameters()):,}")
    if args.resume:
        net.load_state_dict(torch.load(args.resume, map_location="cpu"))

    if args.steps > 0:
        data = load(args.data)
        print(f"training lines: {len(data)}", flush=True)
        stream = batches_by_width(rng, data, args.batch)
        opt = torch.optim.AdamW(net.parameters(), lr=args.lr, weight_decay=1e-4)
        warm = min(300, args.steps // 10)
        sched = torch.optim.lr_scheduler.LambdaLR(
            opt, lambda s: (s + 1) / warm if s < warm else 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, args.steps - warm))) * 0.98 + 0.02
        )
        ctc = nn.CTCLoss(blank=0, zero_infinity=True)
        net.train()
        net.to(memory_format=torch.channels_last)  # faster convs, pooling and BatchNorm on CPU
        t0 = time.time()
        run = 0.0
        for step in range(1, args.steps + 1):
            x, tg, tl = batch(rng, data, next(stream), train=True)
            logits = net(x.contiguous(memory_format=torch.channels_last))  # [N, T, C]
            logp = logits.log_softmax(-1).permute(1, 0, 2)
            il = torch.full((x.shape[0],), logp.shape[0], dtype=torch.long)
            loss = ctc(logp, tg, il, tl)
            opt.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 5.0)
            opt.step()
            sched.step()
            run = 0.98 * run + 0.02 * loss.item() if step > 1 else loss.item()
            if step % 100 == 0 or step == args.steps:
                el = time.time() - t0
                print(f"step {step}/{args.steps} loss {run:.4f} lr {sched.get_last_lr()[0]:.2e} {el / 60:.1f} min", flush=True)
            if args.out and step % 1000 == 0:
                torch.save(net.state_dict(), args.out)
        print(f"training time: {(time.time() - t0) / 60:.1f} min for {args.steps} steps of {args.batch}")
        if args.out:
            torch.save(net.state_dict(), args.out)
    if args.onnx:
        export(net, args.onnx)
    return 0


if __name__ == "__main__":
    sys.exit(main())
