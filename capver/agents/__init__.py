"""The black-box agents (BBAIs) capver assesses (layer 4; section 2.1).

- ``base``: the agent protocol and its capabilities.
- ``primitive``: an agent whose capabilities are the domain's ground actions.
- ``model_backed``: an agent that behaves exactly as a given capability model h⋆ (ground truth).
- ``lao_agent``: the LAO* planning agent on PPDDL (PDDLGym) domains (section 4.2).
- ``minigrid_agents``: two agents for the quadrant DoorKey MiniGrid world (section 4.2).
- ``crafter_agents``: a scripted sub-goal agent for Crafter.
- ``kitchen_agents``: a planning-based cooperative chef for the Overcooked-like kitchen.
- ``llm``: a ReAct-style LLM agent for the DoorKey world over an OpenAI-compatible endpoint.
- ``saycan``: a SayCan-style LLM agent on the tabletop.
- ``faulty``: fault-injecting wrappers, for testing that an assessment survives misbehaving agents.
"""
