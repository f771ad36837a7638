"""The actor-pool seam and its first implementation.

The run shell asks an :class:`ActorPool` for steps (``step()`` -> :class:`ActorStep`: the
sequences completed, env steps taken, episodes finished) and hands it new weights by
version (``update_weights(weights, version)``). :class:`VectorActor` is the in-process
pool: vectorized environments stepped together by a :class:`BatchPolicy` that runs its own
copy of the acting network (one epsilon per env for value-based agents), each env's stream
cut into sequences, with the policy's per-step extras, by its own SequenceWriter. The pool
of actors in other processes (:mod:`agents.core.ray_pool`) implements the same calls, each
process running a VectorActor built from an :class:`ActorSpec` by :func:`make_vector_actor`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, Protocol

import gymnasium as gym
import numpy as np
import torch

from agents.core.ale_vector import AleBatchEnvs, AtariVector, open_batch_envs
from agents.core.networks import RecurrentNetwork
from agents.core.policy import BatchPolicy, Selector
from agents.core.preprocess import Preprocessor
from agents.core.sequences import EndBehavior, SequenceBatch, SequenceWriter, concat_batches


class FinishedEpisode(NamedTuple):
    actor: int
    length: int
    total_return: float
    sequences: SequenceBatch | None
    """All sequences of the episode (only when the actor keeps them for episode memory)."""


class ActorStep(NamedTuple):
    sequences: SequenceBatch | None
    """Sequences completed by this step (all actors), or None."""
    env_steps: int
    """Real transitions taken (resets excluded)."""
    finished: list[FinishedEpisode]


class ActorPool(Protocol):
    """Where experience comes from."""

    num_envs: int
    """Environments stepped together (a rollout is ``rollout_steps * num_envs`` steps)."""

    def step(self) -> ActorStep:
        """Experience gathered since the last call (at least one env step)."""
        ...

    def update_weights(self, weights: Mapping[str, torch.Tensor], version: int) -> None:
        """Act with these weights of the acting network (``version``: learner updates)."""
        ...

    def metrics(self) -> dict[str, float]:
        """Scalars for the training log (restarts, policy lag; may be empty)."""
        ...

    def close(self) -> None: ...


class ActorSpec(NamedTuple):
    """Everything needed to build one vector of actors, in this process or another."""

    make_env: Callable[[], gym.Env]
    """Builds one env (the agent's ``make_env``: picklable, so Ray processes can call it)."""
    network: RecurrentNetwork
    """The acting network (copied: the actors never share the learner's module)."""
    selector: Selector
    num_envs: int
    preprocess: Preprocessor
    length: int
    period: int
    end: EndBehavior
    env_seed: int
    """Env i is reset with ``env_seed + i`` first."""
    policy_seed: int
    """Seed of the policy's generator (exploration, sampling)."""
    keep_episodes: bool = False
    first_actor: int = 0
    """Index of env 0 among all actors (``FinishedEpisode.actor``)."""
    atari_vector: AtariVector = "python"
    """ALE envs: stepped by ale-py's vector env (:mod:`agents.core.ale_vector`) or a list."""


def make_vector_actor(spec: ActorSpec, device: torch.device) -> VectorActor:
    """A :class:`VectorActor` on a copy of ``spec.network``."""
    policy = BatchPolicy.copy_of(
        spec.network,
        spec.selector,
        spec.num_envs,
        device,
        np.random.default_rng(spec.policy_seed),
    )
    return VectorActor(
        [spec.make_env for _ in range(spec.num_envs)],
        policy,
        spec.preprocess,
        spec.length,
        spec.period,
        spec.end,
        seed=spec.env_seed,
        keep_episodes=spec.keep_episodes,
        first_actor=spec.first_actor,
        batch_envs=open_batch_envs(spec.make_env, spec.num_envs, spec.atari_vector),
    )


class VectorActor:
    def __init__(
        self,
        env_fns: list[Callable[[], gym.Env]],
        policy: BatchPolicy,
        preprocess: Preprocessor,
        length: int,
        period: int,
        end: EndBehavior,
        seed: int,
        keep_episodes: bool = False,
        first_actor: int = 0,
        batch_envs: AleBatchEnvs | None = None,
    ):
        self.batch_envs = batch_envs
        """Steps all envs as one batch instead of ``envs`` (ALE; None: the list)."""
        self.envs = [fn() for fn in env_fns] if batch_envs is None else []
        self._space = (batch_envs or self.envs[0]).observation_space
        self.policy = policy
        self._weights: dict[str, torch.Tensor] | None = None
        self.preprocess = preprocess
        self.n = self.num_envs = len(env_fns)
        self.writers = [SequenceWriter(length, period, end) for _ in range(self.n)]
        self.keep_episodes = keep_episodes
        self.first_actor = first_actor
        self._episode_seqs: list[list[SequenceBatch]] = [[] for _ in range(self.n)]
        self._returns = np.zeros(self.n)
        self._obs = self.preprocess(
            batch_envs.reset(seed)
            if batch_envs is not None
            else self._batch([env.reset(seed=seed + i)[0] for i, env in enumerate(self.envs)])
        )
        self._autoreset = np.zeros(self.n, bool)
        h, c = policy.numpy_state()
        for i, w in enumerate(self.writers):
            w.begin({k: v[i] for k, v in self._obs.items()}, h[i], c[i])

    def update_weights(self, weights: Mapping[str, torch.Tensor], version: int) -> None:
        """In place when ``weights`` are this network's entries with their shapes (in
        process that is after every learner step: ``load_state_dict`` walks the modules and
        costs ten times the copies); otherwise ``load_state_dict``, which names what differs."""
        own = self._own_weights()
        if own.keys() == weights.keys() and all(
            own[k].shape == v.shape and own[k].dtype == v.dtype for k, v in weights.items()
        ):
            with torch.no_grad():
                for k, v in weights.items():
                    own[k].copy_(v)
            self.policy.version = version
        else:
            self.policy.load_weights(weights, version)

    def _own_weights(self) -> dict[str, torch.Tensor]:
        """The policy network's state entries (views of its parameters and buffers)."""
        if self._weights is None:
            self._weights = dict(self.policy.network.state_dict())
        return self._weights

    def step(self) -> ActorStep:
        policy = self.policy
        policy_step = policy.act(self._obs)
        actions = policy_step.action
        autoreset = self._autoreset
        next_obs, reward, terminated, truncated = self._step_envs(actions, autoreset)
        next_p = self.preprocess(next_obs)
        policy.observe(actions, reward)
        done = terminated | truncated
        policy.reset(done | autoreset)
        h, c = policy.numpy_state()
        out: list[SequenceBatch] = []
        finished: list[FinishedEpisode] = []
        env_steps = 0
        extras = policy_step.extras
        for i, w in enumerate(self.writers):
            obs_i = {k: v[i] for k, v in next_p.items()}
            if autoreset[i]:  # this step only reset env i: a new episode begins
                w.begin(obs_i, h[i], c[i])
                self._returns[i] = 0.0
                continue
            env_steps += 1
            r = float(reward[i])
            self._returns[i] += r
            extras_i = {k: v[i] for k, v in extras.items()} if extras else None
            seq = w.step(actions[i], r, bool(terminated[i]), obs_i, h[i], c[i], extras_i)
            if done[i]:
                last = w.end()
                seq = (
                    last if seq is None else (seq if last is None else concat_batches([seq, last]))
                )
            if seq is not None:
                out.append(seq)
                if self.keep_episodes:
                    self._episode_seqs[i].append(seq)
            if done[i]:
                kept = self._episode_seqs[i]
                finished.append(
                    FinishedEpisode(
                        self.first_actor + i,
                        w.steps,
                        float(self._returns[i]),
                        concat_batches(kept) if kept else None,
                    )
                )
                self._episode_seqs[i] = []
        self._autoreset = done
        self._obs = next_p
        batch = (out[0] if len(out) == 1 else concat_batches(out)) if out else None
        return ActorStep(batch, env_steps, finished)

    def _step_envs(
        self, actions: np.ndarray, autoreset: np.ndarray | None = None
    ) -> tuple[object, np.ndarray, np.ndarray, np.ndarray]:
        """Each env steps (or, on the step after its episode ended, only resets: reward 0,
        neither flag), as Gymnasium's SyncVectorEnv does in its default next-step autoreset
        mode, without merging infos nobody reads (a third of its cost for one env).
        ``autoreset``: the envs that only reset (default: those whose episode ended on the
        last step)."""
        if self.batch_envs is not None:  # resets the same envs by itself (next-step mode)
            return self.batch_envs.step(actions)
        if autoreset is None:
            autoreset = self._autoreset
        obs: list = []
        rewards: list[float] = []
        terminated: list[bool] = []
        truncated: list[bool] = []
        for env, reset, action in zip(self.envs, autoreset, actions):
            if reset:
                obs.append(env.reset()[0])
                rewards.append(0.0)
                terminated.append(False)
                truncated.append(False)
            else:
                o, r, term, trunc, _ = env.step(action)
                obs.append(o)
                rewards.append(r)
                terminated.append(term)
                truncated.append(trunc)
        return (
            self._batch(obs),
            np.array(rewards, np.float64),
            np.array(terminated, bool),
            np.array(truncated, bool),
        )

    def _batch(self, obs: list) -> object:
        """One observation per env stacked into a new batch of the space's layout."""
        if type(self._space) is gym.spaces.Box:
            return np.array(obs).astype(self._space.dtype, copy=False)  # np.stack's copy, cheaper
        return gym.vector.utils.concatenate(
            self._space, obs, gym.vector.utils.create_empty_array(self._space, self.n)
        )

    def metrics(self) -> dict[str, float]:
        return {}

    def close(self) -> None:
        if self.batch_envs is not None:
            self.batch_envs.close()
        for env in self.envs:
            env.close()


__all__ = [
    "ActorPool",
    "ActorSpec",
    "ActorStep",
    "FinishedEpisode",
    "VectorActor",
    "make_vector_actor",
]
