"""A reflection of the env (``--mirror env``): the network made exactly symmetric under it.

Some envs look the same in a mirror: CartPole reflected about the track's centre is CartPole,
with every coordinate negated and "push left" and "push right" swapped. A reflection is an
observation map ``M`` (``M(s)[i] = sign[i] * s[perm[i]]``) and an action permutation ``P``,
each its own inverse. A network made from any network ``F`` as

    out(s) = (F(s) + P F(M s)) / 2        (per head: action axes permuted by P, values as they are)

obeys ``out(M s) = P out(s)`` exactly, whatever the weights: pi(P a | M s) = pi(a | s), and
the critic's values likewise. The recurrent network runs two streams, one on the history as
it is and one on its mirror image (observations through ``M``, previous actions through
``P``), each with its own LSTM state: the state is the two side by side, ``[B, 2H]``.

Why: on CartPole the reward does not care where the cart stands, so a learned policy carries
an offset that parks the cart off centre (every episode of a checkpoint drifts the same way);
learning moves that offset, and the greedy return collapses whenever it crosses the track's
end (benchmarks/results/reactor-cartpole-ablation-40k/results.md). A symmetric
policy has no offset to move. This is the reflection-equivariant policy of MDP homomorphic
networks (van der Pol et al. 2020), by symmetrisation rather than by constrained weights.

Only single-vector observation spaces with a known reflection (``REFLECTIONS``) are
supported; a spec read from a file is checked like any other input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch


@dataclass(frozen=True)
class Reflection:
    obs_perm: tuple[int, ...]
    """Observation dimension ``i`` of the mirror image is ``obs_sign[i] * s[obs_perm[i]]``."""
    obs_sign: tuple[float, ...]
    action_perm: tuple[int, ...]
    """Action ``a`` in the mirror is action ``action_perm[a]``."""

    def check(self, obs_size: int | None = None, num_actions: int | None = None) -> None:
        """ValueError naming what is wrong: sizes, not a permutation, not its own inverse."""
        n, k = len(self.obs_perm), len(self.action_perm)
        if len(self.obs_sign) != n:
            raise ValueError(f"obs_sign: expected {n} values, got {len(self.obs_sign)}")
        if obs_size is not None and n != obs_size:
            raise ValueError(f"obs_perm: expected {obs_size} dimensions, got {n}")
        if num_actions is not None and k != num_actions:
            raise ValueError(f"action_perm: expected {num_actions} actions, got {k}")
        for name, perm in (("obs_perm", self.obs_perm), ("action_perm", self.action_perm)):
            if sorted(perm) != list(range(len(perm))):
                raise ValueError(f"{name}: expected a permutation of 0..{len(perm) - 1}")
            if any(perm[perm[i]] != i for i in range(len(perm))):
                raise ValueError(f"{name}: expected its own inverse (a reflection)")
        if any(s not in (-1.0, 1.0) for s in self.obs_sign):
            raise ValueError("obs_sign: expected each -1 or 1")
        if any(self.obs_sign[i] != self.obs_sign[self.obs_perm[i]] for i in range(n)):
            raise ValueError("obs_sign: expected equal signs on dimensions swapped together")

    def to_json(self) -> dict[str, Any]:
        return {"obs_perm": list(self.obs_perm), "obs_sign": list(self.obs_sign),
                "action_perm": list(self.action_perm)}  # fmt: skip

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> Reflection:
        """Raises KeyError/TypeError/ValueError on a malformed one (callers name the file)."""
        out = Reflection(
            tuple(_ints(d["obs_perm"], "obs_perm")),
            tuple(float(s) for s in _seq(d["obs_sign"], "obs_sign")),
            tuple(_ints(d["action_perm"], "action_perm")),
        )
        out.check()
        return out

    def observe(self, x: torch.Tensor) -> torch.Tensor:
        """``[..., n]`` observations -> their mirror images."""
        perm = torch.tensor(self.obs_perm, device=x.device)
        return mirror_obs(x, perm, torch.tensor(self.obs_sign, dtype=x.dtype, device=x.device))

    def actions(self, a: torch.Tensor) -> torch.Tensor:
        """Previous actions (-1: none) -> the mirror's."""
        return mirror_actions(a, torch.tensor(self.action_perm, dtype=a.dtype, device=a.device))


def mirror_obs(x: torch.Tensor, perm: torch.Tensor, sign: torch.Tensor) -> torch.Tensor:
    """``[..., n]`` observations through ``M`` (``perm``, ``sign``: a reflection's, as tensors:
    the network keeps them as buffers rather than build them every step)."""
    return x.index_select(-1, perm) * sign


def mirror_actions(a: torch.Tensor, perm: torch.Tensor) -> torch.Tensor:
    """Actions (-1: none, kept) through the permutation ``perm`` (a tensor)."""
    return torch.where(a >= 0, perm[a.clamp(min=0)], a)


def _seq(v: Any, name: str) -> Sequence:
    if not isinstance(v, (list, tuple)) or len(v) > 4096:
        raise ValueError(f"{name}: expected a list of at most 4096 numbers")
    return v


def _ints(v: Any, name: str) -> list[int]:
    out = []
    for x in _seq(v, name):
        if isinstance(x, bool) or not isinstance(x, int):
            raise ValueError(f"{name}: expected integers, got {x!r}")
        out.append(x)
    return out


REFLECTIONS: dict[str, Reflection] = {
    # x, x', theta, theta' all negated; push left <-> push right
    "CartPole": Reflection((0, 1, 2, 3), (-1.0, -1.0, -1.0, -1.0), (1, 0)),
    # cos t1, sin t1, cos t2, sin t2, t1', t2': the angles negated; torque -1 <-> +1
    "Acrobot": Reflection((0, 1, 2, 3, 4, 5), (1.0, -1.0, 1.0, -1.0, -1.0, -1.0), (2, 1, 0)),
    # x, y, vx, vy, angle, angle', left leg, right leg: x, vx and the angles negated, the
    # legs swapped; the left and right engines swapped (0 nothing, 2 main engine)
    "LunarLander": Reflection(
        (0, 1, 2, 3, 4, 5, 7, 6), (-1.0, 1.0, -1.0, 1.0, -1.0, -1.0, 1.0, 1.0), (0, 3, 2, 1)
    ),
}
"""Known reflections, by env id without its version (``CartPole-v1`` -> ``CartPole``)."""


def env_reflection(env_id: str) -> Reflection:
    """The known reflection of ``env_id``; ValueError naming the known ones otherwise."""
    name = env_id.split("/")[-1].rsplit("-v", 1)[0]
    if name not in REFLECTIONS:
        raise ValueError(
            f"--mirror env: no known reflection for {env_id!r}; known: "
            f"{', '.join(sorted(REFLECTIONS))} (or --mirror none)"
        )
    return REFLECTIONS[name]


def has_reflection(env_id: str) -> bool:
    """``env_id`` has a known reflection (what ``--mirror auto`` settles on)."""
    try:
        env_reflection(env_id)
    except ValueError:
        return False
    return True


__all__ = [
    "REFLECTIONS",
    "Reflection",
    "env_reflection",
    "has_reflection",
    "mirror_actions",
    "mirror_obs",
]
