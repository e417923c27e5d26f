"""Monte Carlo Query Synthesis (section 3): one module per query-synthesis method and
the registry :data:`QUERY_METHODS` the command line takes its choices from."""

from __future__ import annotations

from collections.abc import Callable

from capver.engines.mcqs.base import QuerySynthesizer, SynthesisConfig
from capver.engines.mcqs.mcqs_e import MCQSExact
from capver.engines.mcqs.mcqs_s import MCQSSampled
from capver.engines.mcqs.random_query import RandomQuery

QUERY_METHODS: dict[str, Callable[[SynthesisConfig], QuerySynthesizer]] = {
    "mcqs-e": MCQSExact,
    "mcqs-s": MCQSSampled,
    "random": RandomQuery,
}
