"""Evaluation: play whole episodes with the (near-)greedy policy and report their returns and,
where the env has a goal, how many reached it; during a run, :func:`evaluate` plays the
learner's acting network (or the deployed weights) on a copy.

Success is the env's goal reached, read from how an episode ended:

* an episode that reached the goal ended by termination (``terminated``), never by the time
  limit alone (``truncated``): a step that terminates at the time limit still counts;
* envs whose termination is the goal itself (``terminated``): MountainCar (the flag),
  Acrobot (the tip above the line), CliffWalking (the goal cell);
* envs that also terminate on failure tell the two apart by the last reward
  (``terminated_positive``): MiniGrid and BabyAI (the goal pays > 0, lava pays 0),
  LunarLander (landed at rest +100, crashed -100), FrozenLake (the goal 1, a hole 0),
  Taxi (the drop-off +20), Blackjack (a win +1);
* every other env has no success (:func:`goal_rule` is None): CartPole's termination is the
  pole falling, Pendulum never ends, an Atari game ends when its lives run out. There the
  success rate is NaN, which the run's logger leaves out of metrics.jsonl, and ``evaluate``
  prints no success count. A positive return is no stand-in: MountainCar pays -1 a step, so
  an episode at the flag still has a negative return.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal, NamedTuple

import gymnasium as gym
import numpy as np
import torch

from agents.core.context import RunContext
from agents.core.controller import AgentController
from agents.core.gate import lengthen
from agents.core.policy import BatchPolicy
from agents.core.preprocess import ObsSpec, spatial_leaves

GoalRule = Literal["terminated", "terminated_positive"]

SPATIAL_EVAL_EPSILON = 0.05
"""``--eval-epsilon``'s default with a grid or image observation: an action that changes
nothing there (a wall, a pickup facing nothing, a paddle at the edge) leaves the observation
as it was, so a greedy policy that picks it once can pick it to the time limit. DQN's Atari
evaluations use the same 0.05."""


def default_eval_epsilon(spec: ObsSpec) -> float:
    """``--eval-epsilon``'s default for an observation spec (see SPATIAL_EVAL_EPSILON; 0,
    greedy, with vector observations only)."""
    return SPATIAL_EVAL_EPSILON if spatial_leaves(spec) else 0.0


GOALS: dict[str, GoalRule] = {
    "MountainCar": "terminated",
    "Acrobot": "terminated",
    "CliffWalking": "terminated",
    "MiniGrid-": "terminated_positive",
    "BabyAI-": "terminated_positive",
    "LunarLander": "terminated_positive",
    "FrozenLake": "terminated_positive",
    "Taxi": "terminated_positive",
    "Blackjack": "terminated_positive",
}
"""Env name prefix (after any ``namespace/``) -> how an episode shows it reached the goal."""


def goal_rule(env_id: str | None) -> GoalRule | None:
    """How ``env_id``'s episodes show success (see the module docstring); None: no goal."""
    if not env_id:
        return None
    name = env_id.rsplit("/", 1)[-1]
    return next((rule for prefix, rule in GOALS.items() if name.startswith(prefix)), None)


def reached_goal(rule: GoalRule, terminated: bool, last_reward: float) -> bool:
    """An episode that ended with ``terminated`` and ``last_reward`` reached the goal."""
    if rule == "terminated":
        return bool(terminated)
    return bool(terminated) and last_reward > 0


class EvalResult(NamedTuple):
    returns: list[float]
    lengths: list[int]
    successes: list[bool] | None = None
    """Per episode, whether it reached the goal; None where the env has none."""

    @property
    def mean(self) -> float:
        return float(np.mean(self.returns)) if self.returns else float("nan")

    @property
    def success_rate(self) -> float:
        """Share of episodes that reached the goal; NaN where the env has no goal."""
        if not self.successes:
            return float("nan")
        return float(np.mean(self.successes))


def run_episodes(
    env: gym.Env,
    controller: AgentController,
    episodes: int,
    seed: int | None = None,
    stop: Callable[[list[float]], bool] | None = None,
    on_episode: Callable[[], None] | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of ``env`` with ``controller`` (feeding it the rewards);
    ``stop``: asked with the returns so far after each episode, True ends the play;
    ``on_episode``: called as each episode ends (a progress bar). Each reset is seeded
    ``seed + i`` (None: fresh seeds)."""
    rule = goal_rule(env.spec.id if env.spec is not None else None)
    returns, lengths, successes = [], [], []
    for i in range(episodes):
        obs, info = env.reset(seed=None if seed is None else seed + i)
        controller.reset(env, obs, info)
        total, steps, done = 0.0, 0, False
        reward, terminated = 0.0, False
        while not done:
            obs, reward, terminated, truncated, _ = env.step(controller.act(env, obs))
            controller.observe_reward(float(reward))
            total += float(reward)
            steps += 1
            done = terminated or truncated
        returns.append(total)
        lengths.append(steps)
        if rule is not None:
            successes.append(reached_goal(rule, terminated, float(reward)))
        if on_episode is not None:
            on_episode()
        if stop is not None and stop(returns):
            break
    return EvalResult(returns, lengths, successes if rule is not None else None)


def evaluate(
    ctx: RunContext,
    episodes: int,
    seed: int,
    weights: dict[str, torch.Tensor] | None = None,
    stop: Callable[[list[float]], bool] | None = None,
    horizon: float = 1.0,
    label: str | None = None,
    *,
    epsilon: float,
    progress: bool,
) -> EvalResult:
    """Play ``episodes`` with the evaluation policy on a copy of the acting network, with
    ``weights`` (the deployed ones) or the learner's own (``stop``: as
    :func:`run_episodes`; ``horizon``: the step limit as a multiple of the env's), a uniform
    action with probability ``epsilon`` (--eval-epsilon). With a ``label`` and ``progress``
    (the run's --progress), a bar counts the episodes with an ETA: an
    evaluation of long episodes (twenty 640-step DoorKey ones) takes a while."""
    bar = None
    if label is not None and progress:
        from tqdm import tqdm

        bar = tqdm(total=episodes, desc=label, unit="episode", leave=False, dynamic_ncols=True)
    env = ctx.agent.make_env()
    lengthen(env, horizon)  # 1: the env's own limit, unchanged
    try:
        policy = BatchPolicy.copy_of(
            ctx.learner.networks[ctx.agent.acting_network],
            ctx.agent.eval_selector(epsilon),
            1,
            ctx.device,
            np.random.default_rng(seed),
        )
        if weights is not None:
            policy.load_weights(weights, -1)
        ctrl = AgentController(policy, ctx.preprocess, name=f"policy:{ctx.agent.name}")
        tick = None if bar is None else (lambda: bar.update(1))
        return run_episodes(env, ctrl, episodes, seed=seed, stop=stop, on_episode=tick)
    finally:
        env.close()
        if bar is not None:
            bar.close()


__all__ = [
    "GOALS",
    "SPATIAL_EVAL_EPSILON",
    "EvalResult",
    "GoalRule",
    "default_eval_epsilon",
    "evaluate",
    "goal_rule",
    "reached_goal",
    "run_episodes",
]
