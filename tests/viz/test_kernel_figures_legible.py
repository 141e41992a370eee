"""The Kernels page's figures say what a class needs to read them (issue 46): Spearman's rho stays
visible when the pairs are thinned, the Auto-Keras quality says why its ranking can differ from
rho (the page's captions name the default hyperparameters: tests/app/test_explorer_pages.py)."""

from __future__ import annotations

import numpy as np
import pytest

from nasviz import viz


def _distances(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    D = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    return D, x[:, 0] * 3 + rng.normal(size=n)


@pytest.mark.slow  # scipy.stats' first import
def test_the_thinned_pairs_note_does_not_cover_the_kernels_rho():
    D, y = _distances(100)  # 4,950 pairs: more than the scatter draws
    fig = viz.plot_distance_performance({"tw2g": D, "otmann": D * 2}, y, "acc")
    texts = [a.text for a in fig.layout.annotations]
    # every kernel's rho is a subplot title; the note is the figure's subtitle, not a corner
    # annotation drawn over the last subplot title (it hid OTMANN's rho)
    assert sum("Spearman ρ" in t for t in texts) == 2
    assert not any("showing" in t for t in texts), texts
    subtitle = fig.layout.title.subtitle.text
    assert "of 4,950 pairs" in subtitle and "ρ over all 4,950 pairs" in subtitle


def test_kernel_quality_says_its_ranking_can_differ_from_rho():
    D, y = _distances(30)
    K1, K2 = np.exp(-D), np.exp(-D ** 2)
    fig = viz.plot_kernel_quality({"a": K1, "b": K2}, y)
    assert "lower MSE = closer to P" in fig.layout.title.subtitle.text
    assert "can disagree with ρ" in fig.layout.title.subtitle.text



def test_kernel_quality_title_and_notes_fit_a_phone():
    """A figure's title and subtitle do not wrap: the long title was cut at 390 px. The title is
    short and each note is a line of its own."""
    D, y = _distances(30)
    fig = viz.plot_kernel_quality({"a": np.exp(-D), "b": np.exp(-D ** 2)}, y)
    assert len(fig.layout.title.text) <= 40
    lines = fig.layout.title.subtitle.text.split("<br>")
    assert len(lines) == 2 and all(len(line) <= 70 for line in lines), lines
