"""Learning from demonstrations. Reads episodes only through :mod:`demostudio.episode`.

* :mod:`agents.core`: the shared core (config groups, networks as torso + heads, sequences
  with extras, replay, learner with target sets, actor pool, schedules, the agent interface
  and the run shell, checkpoints, restore); see its docstring.
* :mod:`agents.r2d2`, :mod:`agents.r2d3`, :mod:`agents.dqfd`, :mod:`agents.bc`,
  :mod:`agents.sqil`, :mod:`agents.reactor`, :mod:`agents.rnd_ppo` (PPO and RND-PPO): the
  algorithms (config + agent + what differs each); ``agents/README.md`` is the map.
* :mod:`agents.registry`: the one list of algorithms (CLI, compare, restore).
"""
