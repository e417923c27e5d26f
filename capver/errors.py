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
        expected: tuple[str, ...] = (),
    ) -> None:
        self.filename = filename
        self.expected = tuple(expected)  # for syntax errors: what the parser would have accepted
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


class PlanningError(CapverError, RuntimeError):
    """A planner could not produce a policy: it exceeded its expansion budget, or the
    problem it was given is malformed (e.g. a negative heuristic value)."""


class PDDLSyntaxError(SourceError):
    """A PDDL domain or problem file that does not follow the PPDDL grammar.

    ``expected`` lists what the parser would have accepted at the error position."""


class PDDLSemanticError(SourceError):
    """Grammatical PDDL that does not denote a valid domain or problem (unknown
    predicate, type, object or variable, wrong arity or argument type, probabilities
    above 1, a problem for another domain)."""


class NotBundledError(CapverError, LookupError):
    """A domain or problem name that capver does not ship."""


class IntrospectionError(CapverError, ValueError):
    """A malformed first-order formula, action schema, decision list or planning
    problem of the model-introspection planner (capver.introspection): an unknown
    predicate or object, a wrong arity or type, an unbound variable."""


class MutationLimitError(IntrospectionError):
    """State mutation (section 5.1 of the introspection paper) would produce more
    mutations than the configured limit (a Cartesian product blew up)."""


class SimulatorError(CapverError, ValueError):
    """A simulator or environment that capver cannot drive: an action space without a
    finite action list, a snapshot the environment cannot restore, or an invalid
    environment/layout configuration argument."""


class PolicyFileError(CapverError, ValueError):
    """A stored agent policy file that cannot be loaded: missing, wrong format
    version, or a malformed entry (the message names the file and the entry)."""


class RunFileError(CapverError, ValueError):
    """A ``capver learn`` output directory whose manifest (``run.json``) is missing,
    malformed, or disagrees with the arguments of a ``--resume``."""


class UsageError(CapverError, ValueError):
    """A command-line argument that is malformed or names something that does not
    exist (the message names the option and what was expected)."""


class PropertySyntaxError(SourceError):
    """A property (``--property``) or ``.props`` file of ``capver verify`` that does
    not follow the property grammar (``grammars/properties.lark``).

    ``expected`` lists what the parser would have accepted at the error position."""


class PropertySemanticError(SourceError):
    """A grammatical property that does not denote one over the model: an unknown
    atom or capability, a probability bound outside [0, 1], a step bound that is not
    a whole number, a duplicate property name."""


class AgentFailureError(CapverError, RuntimeError):
    """Every execution of a capability failed (the agent, the simulator or α raised,
    or a budget ran out): there is nothing to learn from, so learning stops rather
    than report a model of behaviour that was never seen.  The message names the
    capability, the count and the last failure."""


class FailureWarning(UserWarning):
    """More than a few percent of the executions failed: the model describes only
    the executions that did not."""


class SettingWarning(UserWarning):
    """Something about a setting that changes what an execution is, said once
    before learning (e.g. a ``TimeLimit`` wrapper that truncates executions)."""


class UnsupportedQueryError(UsageError):
    """A property the chosen engine does not answer (IC3 and ``E [ G φ ]``, say): the
    engine's limit, not a mistake in the property; another engine may answer it."""
