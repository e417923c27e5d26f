"""The simulators S_E and representation functions α (layer 4; section 2).

- ``base``: the simulator protocol and α.
- ``symbolic``: a simulator whose environment states are symbolic states (α the identity).
- ``gym_adapter``: adapter from a gymnasium environment to the simulator protocol.
- ``ppddl/``: PPDDL environments: a pddlgym-format parser, a grounded exact simulator, bundled domains.
- ``minigrid_env``: a DoorKey-like MiniGrid world split into four quadrant rooms (section 4.2).
- ``crafter_env``: Crafter behind the simulator protocol, with a coarse α.
- ``kitchen``: a compact Overcooked-like kitchen behind the gymnasium API.
- ``tabletop``: a symbolic-geometric tabletop of blocks and bowls for the SayCan-style agent.
"""
