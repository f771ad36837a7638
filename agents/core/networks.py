"""Networks as a recurrent torso plus named heads, built from a JSON-able :class:`NetworkSpec`.

Torso: an encoder per observation leaf (:mod:`agents.core.encoders`), then an LSTM core fed
the previous action (one-hot) and reward (or a feed-forward layer). Heads
(:mod:`agents.core.heads`) read the core's output. One acting step on the CPU runs in numpy
where it can (:mod:`agents.core.numpy_step`).

A checkpoint stores each network's spec (``NetworkSpec.to_json``) beside its weights, so
any registered agent's networks are rebuilt from the file alone.

All sequence tensors are time-major: ``[T, B, ...]``. The LSTM runs as ONE ``nn.LSTM`` call
over the whole sequence: sequences never cross an episode (see :mod:`agents.core.sequences`),
so an episode end only appears as masked zero padding at the tail and needs no reset inside
the sequence.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import torch
from torch import nn

from agents.core.encoders import (  # noqa: F401 (re-exported for callers importing from here)
    GRID_ENCODERS,
    GRID_VALUES,
    GridMLPEncoder,
    ObservationEncoder,
    VectorEncoder,
)
from agents.core.heads import (  # noqa: F401 (re-exported for callers importing from here)
    ACTION_AXIS,
    HEADS,
    DistributionalQ,
    DuelingQ,
    HeadKind,
    HeadSpec,
    PolicyLogits,
    Value,
    numpy_head,
)
from agents.core.mirror import Reflection, mirror_actions, mirror_obs
from agents.core.numpy_step import NumpyStep, Watch, leaf_step, linear_layers
from agents.core.preprocess import ObsSpec, spec_from_json, spec_to_json


class LSTMState(NamedTuple):
    """Recurrent state, each ``[B, H]``."""

    h: torch.Tensor
    c: torch.Tensor


class NetworkOutput(NamedTuple):
    heads: dict[str, torch.Tensor]
    """Each head's output by name, time-major (see the table above)."""
    state: LSTMState
    """State after the last step."""

    @property
    def q(self) -> torch.Tensor:
        """``[T, B, A]`` the ``q`` head (value-based agents)."""
        return self.heads["q"]


def _cut_off(x: torch.Tensor, keep: torch.Tensor | None) -> torch.Tensor:
    """``x`` (``[..., B, H]``) detached from the graph except in the rows ``keep`` (``[B]``
    bool; None: every row detached)."""
    if keep is None:
        return x.detach()
    return torch.where(keep.view(-1, 1), x, x.detach())


@dataclass(frozen=True)
class NetworkSpec:
    """Everything needed to rebuild a network (stored in checkpoints as JSON)."""

    obs_spec: ObsSpec
    num_actions: int
    hidden: int = 64
    lstm: int = 64
    recurrent: bool = True
    heads: Mapping[str, HeadSpec] = field(default_factory=lambda: {"q": HeadSpec("dueling_q")})
    grid_encoder: str = "conv"
    """Encoder of MiniGrid views (a key of ``GRID_ENCODERS``; files without it: conv)."""
    mirror: Reflection | None = None
    """The env's reflection the network is symmetric under (:mod:`agents.core.mirror`)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "obs_spec": spec_to_json(self.obs_spec),
            "num_actions": self.num_actions,
            "hidden": self.hidden,
            "lstm": self.lstm,
            "recurrent": self.recurrent,
            "heads": {k: {"kind": h.kind, "atoms": h.atoms} for k, h in self.heads.items()},
            "grid_encoder": self.grid_encoder,
            "mirror": None if self.mirror is None else self.mirror.to_json(),
        }

    @staticmethod
    def from_json(d: Mapping[str, Any]) -> NetworkSpec:
        """Raises KeyError/TypeError/ValueError on a malformed spec (callers name the file)."""
        heads = {
            str(k): HeadSpec(str(h["kind"]), int(h.get("atoms", 0))) for k, h in d["heads"].items()
        }
        for name, h in heads.items():
            if h.kind not in HEADS:
                raise ValueError(
                    f"head {name!r}: expected a kind in {sorted(HEADS)}, got {h.kind!r}"
                )
        grid = str(d.get("grid_encoder", "conv"))
        if grid not in GRID_ENCODERS:
            raise ValueError(f"grid_encoder: expected one of {sorted(GRID_ENCODERS)}, got {grid!r}")
        mirror = d.get("mirror")
        return NetworkSpec(
            spec_from_json(d["obs_spec"]),
            int(d["num_actions"]),
            int(d["hidden"]),
            int(d["lstm"]),
            bool(d["recurrent"]),
            heads,
            grid,
            None if mirror is None else Reflection.from_json(mirror),
        )


class RecurrentNetwork(nn.Module):
    """Torso (encoder -> LSTM(features, one-hot previous action, previous reward)) + heads.

    With ``recurrent=False`` the LSTM is replaced by a Linear+ReLU layer on the features
    only: every step is valued on its own observation (the state is passed through).

    With a ``mirror`` the torso runs on the history and on its mirror image (one pass, each
    row followed by its image), and each head averages its two outputs
    (:mod:`agents.core.mirror`): the features are the two streams side by side
    (``[T, B, 2 * lstm]``), and so is the state (``[B, 2 * lstm]``)."""

    def __init__(self, spec: NetworkSpec):
        super().__init__()
        self.spec = spec
        self.num_actions = spec.num_actions
        self.lstm_size = spec.lstm
        self.recurrent = spec.recurrent
        self.mirror = spec.mirror
        if self.mirror is not None:
            leaves = list(spec.obs_spec.values())
            if len(leaves) != 1 or leaves[0].kind != "vector":
                raise ValueError("mirror: expected an env whose observation is one vector")
            self.mirror.check(leaves[0].shape[0], spec.num_actions)
            self._obs_leaf = next(iter(spec.obs_spec))
            for name, values, kind in (
                ("_obs_perm", self.mirror.obs_perm, torch.long),
                ("_obs_sign", self.mirror.obs_sign, torch.float32),
                ("_action_perm", self.mirror.action_perm, torch.long),
            ):
                self.register_buffer(name, torch.tensor(values, dtype=kind), persistent=False)
        self.encoder = ObservationEncoder(spec.obs_spec, spec.hidden, spec.grid_encoder)
        if spec.recurrent:
            self.core = nn.LSTM(self.encoder.out_dim + spec.num_actions + 1, spec.lstm)
            # row a + 1 is the one-hot of previous action a; row 0 (a = -1: none) is zeros
            # built in numpy: on the meta device (the footprint check) torch.eye goes through
            # torch's reference ops, which import torch._dynamo (seconds of start-up)
            eye = np.eye(spec.num_actions + 1, dtype=np.float32)[:, 1:]
            self.register_buffer("_action_onehot", torch.from_numpy(eye.copy()), persistent=False)
        else:
            self.core = nn.Sequential(nn.Linear(self.encoder.out_dim, spec.lstm), nn.ReLU())
        self.heads = nn.ModuleDict(
            {
                name: HEADS[h.kind](spec.lstm, spec.hidden, spec.num_actions, h)
                for name, h in spec.heads.items()
            }
        )

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> LSTMState:
        width = self.lstm_size * (1 if self.mirror is None else 2)
        z = torch.zeros(batch, width, device=device)
        return LSTMState(z, z.clone())

    def torso(
        self,
        obs: dict[str, torch.Tensor],
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        state: LSTMState,
        burn_in: int = 0,
        fresh: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, LSTMState]:
        """``[T, B, F]`` core outputs (``F``: lstm, or twice it with a mirror) and the state
        after the last step; ``burn_in`` and ``fresh``: see :meth:`_stream`."""
        if self.mirror is None:
            return self._stream(obs, prev_action, prev_reward, state, burn_in, fresh)
        # both streams in one pass: each row followed by its mirror image (so the state
        # [B, 2 * lstm] is [2B, lstm] as it lies in memory)
        t, b, n, key = prev_action.shape[0], prev_action.shape[1], self.lstm_size, self._obs_leaf
        x = obs[key].float()
        x = torch.stack([x, mirror_obs(x, self._obs_perm, self._obs_sign)], 2)
        mirrored = mirror_actions(prev_action, self._action_perm)
        out, after = self._stream(
            {key: x.reshape(t, 2 * b, *x.shape[3:])},
            torch.stack([prev_action, mirrored], 2).reshape(t, 2 * b),
            prev_reward.repeat_interleave(2, dim=1),
            LSTMState(state.h.reshape(2 * b, n), state.c.reshape(2 * b, n)),
            burn_in, None if fresh is None else fresh.repeat_interleave(2),
        )  # fmt: skip
        both = LSTMState(after.h.reshape(b, 2 * n), after.c.reshape(b, 2 * n))
        return out.reshape(t, b, 2 * n), both

    def head_outputs(
        self, features: torch.Tensor, detached: tuple[str, ...] = ()
    ) -> dict[str, torch.Tensor]:
        """Every head on :meth:`torso`'s features (the heads named in ``detached`` on the
        features cut off the graph); with a mirror, each head's two outputs averaged."""
        if self.mirror is not None:  # the two streams as rows again: each head runs once
            t, b = features.shape[:2]
            features = features.reshape(t, 2 * b, self.lstm_size)
        out = {}
        for name, head in self.heads.items():
            y = head(features.detach() if name in detached else features)
            if self.mirror is not None:
                y = y.reshape(t, b, 2, *y.shape[2:])
                seen, mirrored = y[:, :, 0], y[:, :, 1]
                axis = ACTION_AXIS[self.spec.heads[name].kind]
                if axis is not None:
                    mirrored = mirrored.index_select(axis, self._action_perm)
                y = (seen + mirrored) / 2
            out[name] = y
        return out

    def _stream(self, obs: dict[str, torch.Tensor], prev_action: torch.Tensor,
                prev_reward: torch.Tensor, state: LSTMState, burn_in: int = 0,
                fresh: torch.Tensor | None = None) -> tuple[torch.Tensor, LSTMState]:  # fmt: skip
        """``[T, B, lstm]`` core outputs and the state after the last step. The first
        ``burn_in`` steps only refresh the recurrent state: no gradient flows through them
        (their outputs are returned, detached), except in the rows ``fresh`` (``[B]`` bool)
        marks: sequences that start an episode hold its true initial state, so there is
        nothing to refresh and their first steps are learned like the rest."""
        t, b = prev_action.shape[0], prev_action.shape[1]
        flat = {k: v.reshape(t * b, *v.shape[2:]) for k, v in obs.items()}
        burn = burn_in if 0 < burn_in < t else 0
        learn_burn = bool(burn) and fresh is not None and bool(fresh.any())
        keep = fresh if learn_burn else None
        if not self.recurrent:  # no state to refresh: the burn-in's outputs are cut off
            out = self.core(self.encoder(flat).reshape(t, b, -1))
            if burn:
                out = torch.cat([_cut_off(out[:burn], keep), out[burn:]])
            return out, state
        if burn and not learn_burn:  # the burn-in's encoder without a graph either
            with torch.no_grad():
                head = self._core_input(
                    {k: v[: burn * b] for k, v in flat.items()}, prev_action[:burn],
                    prev_reward[:burn], burn, b,
                )  # fmt: skip
            tail = self._core_input(
                {k: v[burn * b :] for k, v in flat.items()}, prev_action[burn:],
                prev_reward[burn:], t - burn, b,
            )  # fmt: skip
        else:  # one encoder pass over every step
            x = self._core_input(flat, prev_action, prev_reward, t, b)
            head, tail = x[:burn], x[burn:]
        if t == 1:  # one step (acting): the cell kernel, a third of the multi-step call's cost
            h1, c1 = torch.lstm_cell(tail[0], (state.h, state.c), *self.core._flat_weights)
            return h1.unsqueeze(0), LSTMState(h1, c1)
        if not burn:
            return self._lstm(tail, state)
        if learn_burn:  # rows that do not start an episode are cut off the graph
            burnt, after = self._lstm(head, state)
            burnt = _cut_off(burnt, keep)
            state = LSTMState(_cut_off(after.h, keep), _cut_off(after.c, keep))
        else:
            with torch.no_grad():
                burnt, state = self._lstm(head, state)
        out, state = self._lstm(tail, state)
        return torch.cat([burnt, out], dim=0), state

    def _core_input(self, flat: dict[str, torch.Tensor], prev_action: torch.Tensor,
                    prev_reward: torch.Tensor, t: int, b: int) -> torch.Tensor:  # fmt: skip
        features = self.encoder(flat).reshape(t, b, -1)
        # -1 (no previous action, start of episode) maps to an all-zero one-hot.
        a = self._action_onehot[prev_action.long() + 1]
        return torch.cat([features, a, prev_reward.float().unsqueeze(-1)], dim=-1)

    def _lstm(self, x: torch.Tensor, state: LSTMState) -> tuple[torch.Tensor, LSTMState]:
        # the kernel nn.LSTM.forward calls, without its per-call Python checks (one layer,
        # unidirectional, time-major, no dropout: what self.core is)
        out, h, c = torch.lstm(
            x, (state.h.unsqueeze(0), state.c.unsqueeze(0)), self.core._flat_weights,
            True, 1, 0.0, self.training, False, False,
        )  # fmt: skip
        return out, LSTMState(h[0], c[0])

    def forward(
        self,
        obs: dict[str, torch.Tensor],
        prev_action: torch.Tensor,
        prev_reward: torch.Tensor,
        state: LSTMState,
        burn_in: int = 0,
        fresh: torch.Tensor | None = None,
    ) -> NetworkOutput:
        """``obs[leaf]``: ``[T, B, ...]``; ``prev_action``: ``[T, B]`` long (-1 = none);
        ``prev_reward``: ``[T, B]``; ``state``: each ``[B, H]``; ``burn_in``, ``fresh``:
        see :meth:`torso` (the heads still give all ``T`` steps). One step without a graph
        on the CPU (acting) runs in numpy where :meth:`numpy_step` covers the network."""
        if prev_action.shape[0] == 1 and not torch.is_grad_enabled():
            step = self.numpy_step() if prev_action.device.type == "cpu" else None
            arrays = {k: v.numpy()[0] for k, v in obs.items()} if step is not None else {}
            if step is not None and step.fits(prev_action.shape[1]) and step.accepts(arrays):
                heads, h, c = step(arrays, prev_action.numpy()[0], prev_reward.numpy()[0],
                                   state.h.numpy(), state.c.numpy())  # fmt: skip
                after = state if step.lstm is None else LSTMState(_tensor(h), _tensor(c))
                return NetworkOutput({k: _tensor(v[None]) for k, v in heads.items()}, after)
        out, state = self.torso(obs, prev_action, prev_reward, state, burn_in, fresh)
        return NetworkOutput(self.head_outputs(out), state)

    def numpy_step(self) -> NumpyStep | None:
        """This network's acting step in numpy (:mod:`agents.core.numpy_step`), on views of
        its current parameters; None where it is not covered (frames, grids, a mirror,
        weights off the CPU or not float32)."""
        cached = _NUMPY_STEPS.get(self)
        if cached is None or not cached[0].current():
            tensors = [*self.parameters(), *self.buffers()]
            cached = _NUMPY_STEPS[self] = (Watch(tensors), self._build_numpy_step(tensors))
        return cached[1]

    def _build_numpy_step(self, tensors: list[torch.Tensor]) -> NumpyStep | None:
        if self.mirror is not None or any(
            t.device.type != "cpu" or t.dtype not in (torch.float32, torch.int64) for t in tensors
        ):
            return None
        leaves = [leaf_step(k, enc, self.spec.obs_spec[k].kind)
                  for k, enc in self.encoder.encoders.items()]  # fmt: skip
        heads = {name: numpy_head(head, self.spec.heads[name]) for name, head in self.heads.items()}
        if None in leaves or None in heads.values():
            return None
        widths = [w.size for leaf in leaves for w, _ in getattr(leaf, "layers", [])]
        if self.recurrent:
            lstm = tuple(w.detach().numpy() for w in self.core._flat_weights)
            widths.append(max(lstm[0].shape[1], lstm[1].shape[1]) * lstm[0].shape[0])
            return NumpyStep(leaves, lstm, None, self.num_actions, heads, max(widths))
        core = linear_layers(self.core)
        if core is None:
            return None
        widths.append(core[0][0].size)
        return NumpyStep(leaves, None, core, self.num_actions, heads, max(widths))


_NUMPY_STEPS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
"""Each network's numpy step and the watch on the tensors it views (kept off the module, so
that a deep copy or a pickled network never carries views of another network's tensors)."""


def _tensor(x: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(x))


class RecurrentQNetwork(RecurrentNetwork):
    """A network with one ``dueling_q`` head named ``q`` (value-based agents)."""

    def __init__(
        self,
        spec: ObsSpec,
        num_actions: int,
        hidden: int = 64,
        lstm: int = 64,
        recurrent: bool = True,
    ):
        super().__init__(NetworkSpec(spec, num_actions, hidden, lstm, recurrent))


def legacy_state_dict(state: Mapping[str, torch.Tensor], head: str) -> dict[str, torch.Tensor]:
    """Weights of a checkpoint written before heads existed (a dueling head at the top
    level: ``value.*``, ``advantage.*``) renamed into head ``head``."""
    out = {}
    for k, v in state.items():
        if k.startswith(("value.", "advantage.")):
            k = f"heads.{head}.{k}"
        out[k] = v
    return out


__all__ = [
    "HEADS",
    "HeadSpec",
    "LSTMState",
    "NetworkOutput",
    "NetworkSpec",
    "ObservationEncoder",
    "RecurrentNetwork",
    "RecurrentQNetwork",
    "legacy_state_dict",
]
