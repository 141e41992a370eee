"""What a network morphism is, for every space that declares the ``morphisms`` representation.

Auto-Keras's four morphisms (paper 003 Sec. 3.3): ``deep`` inserts a layer that computes the
identity, ``wide`` gives a layer more units, ``add`` and ``concat`` add skip connections whose new
weights are zero. A :class:`Morph` names one of them on a given network; a :class:`MorphResult` is
the network it makes and how the child's layers relate to the parent's, which is what weight
inheritance reads. The layer space (:mod:`nasviz.spaces.mlp.morphisms`) and the CNN space
(:mod:`nasviz.spaces.cnn.morphisms`) apply them; a space exposes them through
:meth:`~nasviz.spaces.base.SearchSpace.sample_morphs`, :meth:`~nasviz.spaces.base.SearchSpace.apply_morphs`
and :meth:`~nasviz.spaces.base.SearchSpace.morph_network`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from nasviz.arch import Architecture

#: The morphism kinds of paper 003 Sec. 3.3.
KINDS: tuple[str, ...] = ("deep", "wide", "add", "concat")


@dataclass(frozen=True)
class Morph:
    """One morphism; node indices refer to the network it is applied to.

    ``kind``: ``"deep"`` (``u``, ``label``), ``"wide"`` (``u``, ``units``), ``"add"`` / ``"concat"``
    (``u``, ``v``).
    """

    kind: str
    u: int
    v: int | None = None
    label: str | None = None
    units: int | None = None

    def to_dict(self) -> dict:
        return {k: val for k, val in asdict(self).items() if val is not None}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Morph":
        """The morph :meth:`to_dict` wrote (``ValueError`` for an unknown kind or key)."""
        unknown = set(data) - {"kind", "u", "v", "label", "units"}
        if unknown or data.get("kind") not in KINDS:
            raise ValueError(f"not a morph: {dict(data)!r}")
        return cls(**dict(data))

    def __str__(self) -> str:
        if self.kind == "deep":
            return f"deep({self.u}, {self.label})"
        if self.kind == "wide":
            return f"wide({self.u}, {self.units})"
        return f"{self.kind}({self.u}, {self.v})"


@dataclass(frozen=True)
class MorphResult:
    """A morphed network and how its layers relate to the parent's.

    ``node_origin[c]``: the parent layer whose weights child layer ``c`` inherits (``None`` for a
    layer the morph inserted). ``feature_origin[c]``: the parent layer whose output features ``c``
    reproduces (for an inserted identity layer, the layer it follows; ``None`` for a layer whose
    output is new, such as a pooling layer on a new skip connection). Both have length
    ``child.n_nodes``.
    """

    parent: Architecture
    child: Architecture
    morph: Morph
    node_origin: tuple[int | None, ...]
    feature_origin: tuple[int | None, ...]
