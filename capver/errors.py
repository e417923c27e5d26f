"""Exception hierarchy of capver.

One root, :class:`CapverError`; every error a user can cause is a subclass that also
derives from the matching built-in (``ValueError``, ``KeyError``, ``OSError``) so that
callers who do not know capver still catch it the usual way.
"""

from __future__ import annotations


class CapverError(Exception):
    """Root of every exception raised on purpose by capver."""


class VocabularyError(CapverError, ValueError):
    """An atom, predicate, object or type that the vocabulary does not have, or a
    predicate applied to arguments of the wrong arity or type."""


class ModelError(CapverError, ValueError):
    """A capability model that violates its definition (e.g. probabilities of a rule
    that do not sum to 1, or a duplicate capability)."""


class DatasetError(CapverError, ValueError):
    """A transition dataset file that cannot be read back: wrong format version,
    vocabulary mismatch, a corrupt record."""


class TornRecordError(DatasetError):
    """The last line of a dataset file was cut off mid-write (e.g. the writer was
    killed).  Everything before it is intact and was loaded."""

    def __init__(self, message: str, *, path: str, line: int, recovered: int) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.recovered = recovered


class SourceError(CapverError, ValueError):
    """An error located in a text file (a model in the DSL, a PDDL file, ...).

    The message always names the file, the line and column, and what was expected;
    ``context`` is the offending source line with a caret under the column.
    """

    def __init__(
        self,
        message: str,
        *,
        filename: str,
        line: int,
        column: int,
        context: str = "",
    ) -> None:
        self.filename = filename
        self.line = line
        self.column = column
        self.context = context
        self.reason = message
        text = f"{filename}:{line}:{column}: {message}"
        if context:
            text += "\n" + context.rstrip("\n")
        super().__init__(text)


class DSLSyntaxError(SourceError):
    """Text that does not follow the capability-model grammar."""


class DSLSemanticError(SourceError):
    """Grammatical text that does not denote a valid capability model (unknown
    predicate, wrong arity/type, probabilities not summing to 1, duplicates)."""


class SolverError(CapverError, RuntimeError):
    """The SMT solver answered neither sat nor unsat."""
