"""capver: learn interpretable probabilistic capability models of black-box AI agents
by active query synthesis, and check them by machine."""

__version__ = "0.1.0"
