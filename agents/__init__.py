"""Learning from demonstrations. Reads episodes only through :mod:`demostudio.episode`.

* :mod:`agents.core`: preprocessing, recurrent Q network, sequence cutting, prioritized
  sequence replay, losses, learner, actors, checkpoints, logging, the shared trainer.
* :mod:`agents.r2d2`, :mod:`agents.r2d3`: the algorithms (config + builder each).
* :mod:`agents.registry`: the names ``demostudio train ALGO`` accepts.
"""
