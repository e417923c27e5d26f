"""The models of a learned run, and every name each one goes by: the lattice bounds
h∧ ⪯ h⋆ ⪯ h∨ of section 3.1 and the Occam model h̃ between them (section 4.2 of the
paper evaluates h∧, the data's maximum-likelihood model).

This enum is the one list of them: the file a run keeps each in, the symbol the
verdicts print, the name on the command line (``--model-kind and``), in Python
(``result.model("h_and")``) and inside the model file (``(capability-model
pessimistic)``).  :meth:`ModelKind.parse` accepts any of those spellings.
"""

from __future__ import annotations

from enum import StrEnum

from capver.errors import UsageError


class ModelKind(StrEnum):
    """A model of a run; the value is its command-line name."""

    AND = "and"
    OR = "or"
    TILDE = "tilde"

    @property
    def file(self) -> str:
        """The file a run directory keeps the model in."""
        return f"h_{self.value}.capm"

    @property
    def python(self) -> str:
        """The model's name in the Python API (``LearnResult.model``, ``Run.model``)."""
        return f"h_{self.value}"

    @property
    def symbol(self) -> str:
        return _SYMBOLS[self]

    @property
    def dsl(self) -> str:
        """The name the model file gives its model: ``(capability-model NAME)``."""
        return _DSL[self]

    @property
    def description(self) -> str:
        return _DESCRIPTIONS[self]

    @classmethod
    def parse(cls, name: str, *, what: str = "model") -> ModelKind:
        """The kind any of its names spells (``and``, ``h_and``, ``h∧``,
        ``pessimistic``, ``h_and.capm``; likewise for the others); a one-line
        :class:`UsageError` naming them otherwise."""
        hit = _SPELLINGS.get(name.strip())
        if hit is None:
            raise UsageError(
                f"{what}={name!r}: expected one of {', '.join(k.python for k in cls)} (or {', '.join(cls)})"
            )
        return hit


BOUNDS = (ModelKind.AND, ModelKind.OR)
"""The lattice bounds, which every verdict about the agent needs."""

_SYMBOLS = {ModelKind.AND: "h∧", ModelKind.OR: "h∨", ModelKind.TILDE: "h̃"}
_DSL = {ModelKind.AND: "pessimistic", ModelKind.OR: "optimistic", ModelKind.TILDE: "occam"}
_DESCRIPTIONS = {
    ModelKind.AND: "the pessimistic bound h∧ (observed transitions only; the data's maximum-likelihood model)",
    ModelKind.OR: "the optimistic bound h∨",
    ModelKind.TILDE: "the Occam model h̃, between h∧ and h∨ and predicting where no data is",
}
_SPELLINGS = {
    spelling: kind for kind in ModelKind for spelling in (kind.value, kind.python, kind.symbol, kind.dsl, kind.file)
}
