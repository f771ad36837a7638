"""Cutting episodes into fixed-length sequences for recurrent replay.

A sequence has ``length = burn_in + trace + 1`` steps and starts every ``period`` steps of
an episode. It never crosses an episode: what runs past the end is zero padding, flagged by
``mask``. The recurrent state the actor had *before* the first observation of a sequence is
stored with it (R2D2's "stored state"); the learner refreshes it with the burn-in.

Position ``j`` of a sequence starting at episode step ``s`` holds observation ``s + j`` and,
when ``mask[j]``, the action taken there, its reward and whether it terminated the episode.
The last position only provides a bootstrap observation, so its mask is always False.
The same :class:`SequenceWriter` cuts live actor streams and recorded demo episodes.

Per-step ``extras`` (what the acting policy returned beside the action: Reactor's
behaviour probability mu(a|x), PPO's log-probability and values) travel with the step
they belong to: ``extras[k][j]`` is the policy's output at observation ``j`` (zeros where
``mask`` is False). A new algorithm needs no new writer, only new keys.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

import numpy as np


class EndBehavior(enum.Enum):
    """What the sequences covering the end of an episode look like.

    Episode of 7 steps (observations 0..7), length 5, period 3::

        steps        0 1 2 3 4 5 6 7
        ZERO_PAD     [0 1 2 3 4]           start 0
                           [3 4 5 6 7]     start 3
                                 [6 7 . . .] start 6, '.' = zero padding, mask 0
        ALIGN_END    [0 1 2 3 4]
                           [3 4 5 6 7]     start 6 moved back to 3 = already written: dropped

    ZERO_PAD keeps every start on the period grid and pads the tail with zeros (the
    padding is masked out of the loss). ALIGN_END moves a start that would run past the
    end back so the sequence ends on the last observation (no padding unless the whole
    episode is shorter than a sequence), dropping it if that duplicates a written one.
    """

    ZERO_PAD = "zero_pad"
    ALIGN_END = "align_end"


class SequenceBatch(NamedTuple):
    """``B`` sequences of ``L`` steps (batch-major as stored: ``[B, L, ...]``).

    ``len()`` is the number of sequences ``B``; because of that, build a new one instead of
    calling ``_replace`` (NamedTuple's ``_make`` checks ``len()`` against the field count)."""

    obs: dict[str, np.ndarray]
    """``[B, L, ...]`` preprocessed observations per leaf."""
    prev_action: np.ndarray
    """``[B, L]`` int64, the action before each observation (-1 at an episode start)."""
    prev_reward: np.ndarray
    """``[B, L]`` float32, the reward before each observation."""
    action: np.ndarray
    """``[B, L]`` int64, the action taken at each observation."""
    reward: np.ndarray
    """``[B, L]`` float32, the reward for that action."""
    terminal: np.ndarray
    """``[B, L]`` float32, 1 where the action ended the episode by termination."""
    mask: np.ndarray
    """``[B, L]`` bool, True where ``action``/``reward`` are real steps to learn from."""
    h0: np.ndarray
    """``[B, H]`` stored LSTM hidden state before the first observation."""
    c0: np.ndarray
    """``[B, H]`` stored LSTM cell state."""
    extras: dict[str, np.ndarray] = {}  # noqa: RUF012 (never mutated: batches are rebuilt)
    """``[B, L, ...]`` per-step policy extras by name (see the module docstring)."""

    def __len__(self) -> int:
        return len(self.action)


DICT_FIELDS = ("obs", "extras")
"""The fields of a SequenceBatch that are dicts of arrays (the others are arrays)."""


def map_batch(fn, *batches: SequenceBatch) -> SequenceBatch:
    """A batch whose every array is ``fn(arrays of batches at that place)``."""
    out = {}
    for name in SequenceBatch._fields:
        if name in DICT_FIELDS:
            out[name] = {
                k: fn([getattr(b, name)[k] for b in batches]) for k in getattr(batches[0], name)
            }
        else:
            out[name] = fn([getattr(b, name) for b in batches])
    return SequenceBatch(**out)


def with_extras(batch: SequenceBatch, **extras: np.ndarray) -> SequenceBatch:
    """``batch`` with extras added or replaced (``[B, L, ...]`` each), e.g. the advantages an
    on-policy agent computes in ``on_rollout``. (``_replace`` cannot be used: see above.)"""
    for k, v in extras.items():
        if v.shape[:2] != batch.action.shape:
            raise ValueError(
                f"extras[{k!r}]: expected shape {batch.action.shape} + (...), got {v.shape}"
            )
    fields = {name: getattr(batch, name) for name in SequenceBatch._fields}
    fields["extras"] = {**batch.extras, **extras}
    return SequenceBatch(**fields)


def take(batch: SequenceBatch, index: np.ndarray) -> SequenceBatch:
    """The sequences at ``index`` (numpy fancy indexing)."""
    return map_batch(lambda xs: xs[0][index], batch)


def concat_batches(batches: list[SequenceBatch]) -> SequenceBatch:
    assert batches, "concat_batches needs at least one batch"
    return map_batch(np.concatenate, *batches)


class SequenceWriter:
    """Cuts one stream of episodes into sequences as steps arrive.

    ``begin`` an episode with its first observation, ``step`` once per action, ``end`` when
    the episode is over; each returns the sequences completed by that call (or None).
    Only the steps still needed by future sequences are kept in memory: the observations
    and states in arrays (a sequence is cut from them by slicing), the scalars in lists.
    """

    def __init__(self, length: int, period: int, end: EndBehavior = EndBehavior.ZERO_PAD):
        if length < 2 or period < 1:
            raise ValueError(f"expected length >= 2 and period >= 1, got {length}, {period}")
        self.length = length
        self.period = period
        self.end_behavior = end
        self._open = False
        self._extra_like: dict[str, np.ndarray] = {}
        self._rows: _Rows | None = None

    def begin(self, obs: dict[str, np.ndarray], h: np.ndarray, c: np.ndarray) -> None:
        rows = self._rows
        if rows is None or not rows.fits(obs, h, c):
            rows = self._rows = _Rows(obs, h, c, 2 * (self.length + self.period) + 2)
        rows.clear()
        rows.append(obs, h, c)
        self._prev_a: list[int] = [-1]
        self._prev_r: list[float] = [0.0]
        self._act: list[int] = []
        self._rew: list[float] = []
        self._term: list[bool] = []
        self._ext: list[dict[str, np.ndarray]] = []
        self._base = 0  # episode step index of element 0 of the lists and rows
        self._next_start = 0
        self._last_written = -1
        self._open = True

    @property
    def steps(self) -> int:
        """Actions taken so far in the open episode."""
        return self._base + len(self._act)

    def step(
        self,
        action: int,
        reward: float,
        terminal: bool,
        next_obs: dict[str, np.ndarray],
        next_h: np.ndarray,
        next_c: np.ndarray,
        extras: dict[str, np.ndarray] | None = None,
    ) -> SequenceBatch | None:
        """One action; ``extras`` are the policy's outputs for it (same keys every step)."""
        assert self._open, "step() before begin()"
        if extras or self._extra_like:
            extras = extras or {}
            if not self._extra_like:
                if self.steps:  # earlier steps of the episode came without them
                    raise ValueError(
                        f"expected the extras {sorted(extras)} from the first step on, got them "
                        f"from step {self.steps}"
                    )
                self._extra_like = {k: np.asarray(v) for k, v in extras.items()}
            if extras.keys() != self._extra_like.keys():
                raise ValueError(
                    f"expected the extras {sorted(self._extra_like)} at every step, "
                    f"got {sorted(extras)}"
                )
            self._ext.append(extras)
        action, reward = int(action), float(reward)
        self._act.append(action)
        self._rew.append(reward)
        self._term.append(bool(terminal))
        self._prev_a.append(action)
        self._prev_r.append(reward)
        rows = self._rows
        rows.append(next_obs, next_h, next_c)
        last_obs = self._base + rows.count - 1
        if self._next_start + self.length - 1 > last_obs:
            return None  # nothing to cut, nothing to drop (what is kept waits on a start)
        starts = []
        while self._next_start + self.length - 1 <= last_obs:
            starts.append(self._next_start)
            self._next_start += self.period
        out = self._cut(starts)
        self._trim()
        return out

    def end(self) -> SequenceBatch | None:
        """The remaining sequences of the episode (padded or aligned per EndBehavior)."""
        assert self._open, "end() before begin()"
        self._open = False
        n_steps = self.steps
        starts = []
        s = self._next_start
        while s < n_steps:
            if self.end_behavior is EndBehavior.ALIGN_END:
                s_aligned = max(0, min(s, n_steps + 1 - self.length))
                if s_aligned > self._last_written:
                    starts.append(s_aligned)
            else:
                starts.append(s)
            s += self.period
        return self._cut(sorted(set(starts))) if starts else None

    def _trim(self) -> None:
        rows = self._rows
        keep_from = self._next_start
        if self.end_behavior is EndBehavior.ALIGN_END:
            keep_from = min(keep_from, self._base + rows.count - self.length)
        # observation i and action i of the lists are both episode step base + i
        drop = min(max(0, keep_from - self._base), len(self._act))
        if drop > 0:
            rows.drop(drop)
            del self._prev_a[:drop], self._prev_r[:drop]
            del self._act[:drop], self._rew[:drop], self._term[:drop]
            if self._ext:
                del self._ext[:drop]
            self._base += drop

    def _cut(self, starts: list[int]) -> SequenceBatch:
        length = self.length
        rows = self._rows
        n_obs = rows.count
        n_act = len(self._act)
        b = len(starts)
        kept = rows.view()
        obs = {k: np.zeros((b, length, *v.shape[1:]), v.dtype) for k, v in kept.obs.items()}
        prev_a = np.full((b, length), -1, np.int64)
        prev_r = np.zeros((b, length), np.float32)
        act = np.zeros((b, length), np.int64)
        rew = np.zeros((b, length), np.float32)
        term = np.zeros((b, length), np.float32)
        mask = np.zeros((b, length), bool)
        ext = {k: np.zeros((b, length, *v.shape), v.dtype) for k, v in self._extra_like.items()}
        los = []
        for i, s in enumerate(starts):
            lo = s - self._base
            assert lo >= 0, "sequence start was trimmed away"
            los.append(lo)
            no = min(length, n_obs - lo)
            for k, v in kept.obs.items():
                obs[k][i, :no] = v[lo : lo + no]
            prev_a[i, :no] = self._prev_a[lo : lo + no]
            prev_r[i, :no] = self._prev_r[lo : lo + no]
            na = max(0, min(length - 1, n_act - lo))
            if na:
                act[i, :na] = self._act[lo : lo + na]
                rew[i, :na] = self._rew[lo : lo + na]
                term[i, :na] = self._term[lo : lo + na]
                mask[i, :na] = True
                for k in ext:
                    ext[k][i, :na] = np.stack([e[k] for e in self._ext[lo : lo + na]])
            self._last_written = max(self._last_written, s)
        return SequenceBatch(
            obs=obs,
            prev_action=prev_a,
            prev_reward=prev_r,
            action=act,
            reward=rew,
            terminal=term,
            mask=mask,
            h0=kept.h[los],
            c0=kept.c[los],
            extras=ext,
        )


class _RowView(NamedTuple):
    obs: dict[str, np.ndarray]
    h: np.ndarray
    c: np.ndarray


class _Rows:
    """The kept observations and recurrent states of one stream, row ``i`` = list element
    ``i``: arrays written in place as steps arrive (rows dropped from the front move back
    only when the end of the arrays is reached), grown when an episode keeps more."""

    def __init__(self, obs: dict[str, np.ndarray], h: np.ndarray, c: np.ndarray, capacity: int):
        self._obs = {k: np.zeros((capacity, *np.shape(v)), np.asarray(v).dtype)
                     for k, v in obs.items()}  # fmt: skip
        self._h = np.zeros((capacity, *np.shape(h)), np.float32)
        self._c = np.zeros((capacity, *np.shape(c)), np.float32)
        self._first = 0
        self.count = 0

    def fits(self, obs: dict[str, np.ndarray], h: np.ndarray, c: np.ndarray) -> bool:
        """Rows of these keys, shapes and dtypes (a stream keeps them from one episode to
        the next; anything else gets new arrays)."""
        return (
            obs.keys() == self._obs.keys()
            and all(
                np.shape(v) == self._obs[k].shape[1:] and np.asarray(v).dtype == self._obs[k].dtype
                for k, v in obs.items()
            )
            and np.shape(h) == self._h.shape[1:]
            and np.shape(c) == self._c.shape[1:]
        )

    def clear(self) -> None:
        self._first = self.count = 0

    def append(self, obs: dict[str, np.ndarray], h: np.ndarray, c: np.ndarray) -> None:
        row = self._first + self.count
        if row == len(self._h):
            self._make_room()
            row = self._first + self.count
        for k, v in self._obs.items():
            v[row] = obs[k]
        self._h[row] = h
        self._c[row] = c
        self.count += 1

    def drop(self, n: int) -> None:
        self._first += n
        self.count -= n

    def view(self) -> _RowView:
        """The kept rows (views: valid until the next append)."""
        lo, hi = self._first, self._first + self.count
        return _RowView({k: v[lo:hi] for k, v in self._obs.items()}, self._h[lo:hi],
                        self._c[lo:hi])  # fmt: skip

    def _make_room(self) -> None:
        lo, n = self._first, self.count
        arrays = [*self._obs.values(), self._h, self._c]
        if n > len(self._h) // 2:  # mostly full: twice the rows
            grown = [np.zeros((2 * len(a), *a.shape[1:]), a.dtype) for a in arrays]
            for new, old in zip(grown, arrays):
                new[:n] = old[lo : lo + n]
            keys = list(self._obs)
            self._obs = dict(zip(keys, grown[: len(keys)]))
            self._h, self._c = grown[len(keys)], grown[len(keys) + 1]
        else:
            for a in arrays:
                a[:n] = a[lo : lo + n].copy()
        self._first = 0


__all__ = [
    "DICT_FIELDS",
    "EndBehavior",
    "SequenceBatch",
    "SequenceWriter",
    "concat_batches",
    "map_batch",
    "take",
    "with_extras",
]
