"""Warm starts by network morphism (paper 003 Sec. 3.3, App. B): epochs to the parent's score.

A parent MLP is trained for ``--epochs`` epochs; its last validation score is the target. For
``--n-morphs`` distinct random morphisms of it (:func:`nasviz.spaces.mlp.morphisms.sample_morphs`), the
child is trained twice with the same settings: from the parent's inherited weights
(function-preserving, :func:`nasviz.spaces.mlp.morphisms.inherit_weights`) and from a fresh initialisation.
For each, the number of training epochs until its validation score first reaches the target is
recorded (``epochs + 1`` if it never does: censored). Epoch 0 is not counted for the warm child
even though it starts at the parent's function (its score before training is reported as
``warm_score_at_0``): it must still reach the target after at least one epoch of training with a
fresh learning-rate schedule. The summary compares the medians (target: warm <= scratch / 2).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from nasviz.spaces.mlp.networks import build_layer_network
from nasviz.spaces.mlp.morphisms import inherit_weights, sample_morphs
from nasviz.spaces import mlp as L

DESCRIPTION = "epochs a morphed child needs to reach its trained parent's validation score: inherited weights vs scratch"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", default="digits", help="bundled dataset (default: digits)")
    parser.add_argument("--parent", default=None, help="parent network string (default: the first initial-pool MLP)")
    parser.add_argument("--epochs", type=int, default=20, help="epochs for the parent and each child (default: 20)")
    parser.add_argument("--n-morphs", type=int, default=10, help="morphisms (children) to test (default: 10)")
    parser.add_argument("--lr", type=float, default=0.05, help="SGD learning rate (default: 0.05)")
    parser.add_argument("--seed", type=int, default=0)


def _first_reaching(curve: list[float], target: float, censored: int) -> int:
    hits = [i + 1 for i, v in enumerate(curve) if v >= target]
    return hits[0] if hits else censored


@torch.no_grad()
def _valid_score(model, data) -> float:
    model.eval()
    out = model(data.x_valid)
    if data.task == "classification":
        return float((out.argmax(1) == data.y_valid).float().mean() * 100)
    y = data.y_valid
    return float(1 - ((out.squeeze(1) - y) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def run(args: argparse.Namespace) -> dict:
    from nasviz.objectives.datasets import load_dataset
    from nasviz.objectives.trainer import train_model

    torch.set_num_threads(1)
    data = load_dataset(args.dataset, seed=args.seed)
    n_in = int(np.prod(data.input_shape))
    parent_arch = L.parse(args.parent) if args.parent else L.initial_pool()[0]
    settings = {"epochs": args.epochs, "patience": args.epochs, "lr": args.lr, "device": "cpu"}
    start = time.perf_counter()
    parent = build_layer_network(parent_arch, n_in, data.n_outputs, seed=args.seed)
    res = train_model(parent, data, seed=args.seed, **settings)
    target = res.valid_curve[-1]
    rng = np.random.default_rng(args.seed)
    children = sample_morphs(parent_arch, rng, args.n_morphs)
    rows = []
    for i, r in enumerate(children):
        warm = inherit_weights(parent, r, seed=args.seed + i)
        score0 = _valid_score(warm, data)
        rw = train_model(warm, data, seed=args.seed + i, **settings)
        scratch = build_layer_network(r.child, n_in, data.n_outputs, seed=args.seed + 1000 + i)
        rs = train_model(scratch, data, seed=args.seed + i, **settings)
        rows.append(
            {
                "morph": str(r.morph),
                "child": L.format(r.child),
                "warm_score_at_0": score0,
                "warm_epochs": _first_reaching(rw.valid_curve, target, args.epochs + 1),
                "scratch_epochs": _first_reaching(rs.valid_curve, target, args.epochs + 1),
                "warm_final": rw.valid_curve[-1],
                "scratch_final": rs.valid_curve[-1],
            }
        )
    warm = np.array([r["warm_epochs"] for r in rows], dtype=float)
    scratch = np.array([r["scratch_epochs"] for r in rows], dtype=float)
    return {
        "dataset": args.dataset,
        "parent": L.format(parent_arch),
        "parent_valid_score": target,
        "epochs": args.epochs,
        "n_morphs": len(rows),
        "median_warm_epochs": float(np.median(warm)),
        "median_scratch_epochs": float(np.median(scratch)),
        "scratch_censored": int(np.sum(scratch > args.epochs)),
        "warm_censored": int(np.sum(warm > args.epochs)),
        "target_met": bool(np.median(warm) <= 0.5 * np.median(scratch)),
        "max_abs_score_change_at_0": float(max(abs(r["warm_score_at_0"] - _valid_score(parent, data)) for r in rows)),
        "children": rows,
        "seconds": time.perf_counter() - start,
    }
