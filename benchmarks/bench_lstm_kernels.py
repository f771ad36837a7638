"""The recurrent core's kernels on one CPU thread, at the learner's shapes; prints JSON.

  python benchmarks/bench_lstm_kernels.py [--reps 60]

Half of an R2D2 update at small shapes is the LSTM (three forward calls and one or two
backward calls of ``torch.lstm``, which runs oneDNN's fused RNN on CPU). Each shape is timed
three ways, forward without a graph (``_f``) and forward plus backward (``_fb``), in CPU
milliseconds per call (medians):

* ``onednn``: ``torch.lstm`` as the networks call it;
* ``native``: the same call with oneDNN off (ATen's own cell loop);
* ``loop``: the input projection of every step in one matrix product, then one
  ``addmm`` and the gate arithmetic per step in Python.

The shapes ``[T, B, I, H]``: the source R2D2's workload (15 steps, 12 sequences, the
matched network), R2D3's default sequence on MountainCar (31 steps, 32 sequences; and its
21-step online part), and DoorKey's (the grid encoder's 64 features, 7 actions, the reward).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch

SHAPES = {
    "source-matched": (15, 12, 36, 50),
    "r2d3-mountaincar": (31, 32, 68, 64),
    "r2d3-mountaincar-online": (21, 32, 68, 64),
    "r2d3-doorkey": (31, 32, 72, 64),
}


def loop_lstm(x, h, c, w_ih, w_hh, b_ih, b_hh):
    """An LSTM layer as one input projection and a Python loop over the steps."""
    t, b = x.shape[0], x.shape[1]
    gx = torch.addmm(b_ih + b_hh, x.reshape(t * b, -1), w_ih.t()).reshape(t, b, -1)
    w, outs = w_hh.t(), []
    for step in range(t):
        i, f, g, o = torch.addmm(gx[step], h, w).chunk(4, 1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outs.append(h)
    return torch.stack(outs)


def time_shape(t: int, b: int, i: int, h: int, reps: int) -> dict[str, float]:
    lstm = torch.nn.LSTM(i, h)
    x, h0, c0 = torch.randn(t, b, i), torch.zeros(b, h), torch.zeros(b, h)
    weights = lstm._flat_weights

    def fused():
        return torch.lstm(x, (h0[None], c0[None]), weights, True, 1, 0.0, True, False, False)[0]

    def native():
        with torch.backends.mkldnn.flags(enabled=False):
            return fused()

    out = {}
    for name, fn in {"onednn": fused, "native": native,
                     "loop": lambda: loop_lstm(x, h0, c0, *weights)}.items():  # fmt: skip
        for grad in (False, True):
            times = []
            for _ in range(reps):
                start = time.thread_time()
                if grad:
                    fn().sum().backward()
                else:
                    with torch.no_grad():
                        fn()
                times.append(time.thread_time() - start)
            out[f"{name}_{'fb' if grad else 'f'}"] = round(statistics.median(times[5:]) * 1e3, 3)
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--reps", type=int, default=60)
    args = p.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    load = [round(x, 2) for x in os.getloadavg()]
    shapes = {k: time_shape(*v, args.reps) for k, v in SHAPES.items()}
    print(json.dumps({"benchmark": "lstm-kernels", "torch": torch.__version__,
                      "ms_per_call": shapes, "shapes_TBIH": SHAPES, "load_before": load,
                      "load_after": [round(x, 2) for x in os.getloadavg()]}, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
