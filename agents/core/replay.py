"""Prioritized sequence replay on a sum tree, with the four replay kinds of the Keras-RL R2D3
write-up (uniform, proportional, rank-based, greedy).

Each stored item is one sequence (see :mod:`agents.core.sequences`). A sequence's priority
is ``eta * max|delta| + (1 - eta) * mean|delta|`` over its learned steps (R2D2, eta = 0.9);
new sequences enter at the largest priority seen so far. How a batch is drawn from the
priorities ``p_i`` of the ``N`` stored items is the buffer's *kind*:

================ ==========================================================================
``uniform``      ``P(i) = 1 / N`` (priorities are kept but not used; weights are 1)
``proportional`` ``P(i) = p_i^alpha / sum_j p_j^alpha`` (stratified over the sum tree)
``rank``         ``P(i) = (1 / rank_i)^alpha / sum_j (1 / j)^alpha``, rank 1 the highest
                 priority (ties: the older slot first); stratified over the ranks' CDF
``greedy``       the ``B`` highest priorities, best first, no randomness; weights are 1
================ ==========================================================================

A ``uniform_share`` ``u`` mixes uniform draws into the proportional and rank kinds: each
draw is uniform with probability ``u``, so ``P(i) = (1 - u) P_kind(i) + u / N``. A stored
priority changes only when its sequence is replayed, so a sequence learned once keeps a low
priority however much the network has since drifted on it; the uniform share keeps
replaying such sequences while the priorities still bring the rare high-error ones forward.

Importance weights are ``(N * P(i))^-beta``, normalised by their batch maximum by the mix.
The sum tree always holds ``p_i^alpha`` (DQfD reads each buffer's priority mass from it).
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple, get_args

import numpy as np

from agents.core.sequences import DICT_FIELDS, SequenceBatch, map_batch, take


class SumTree:
    """Binary sum tree over ``capacity`` leaves, vectorized with numpy."""

    def __init__(self, capacity: int):
        if capacity < 1:
            raise ValueError(f"expected capacity >= 1, got {capacity}")
        self.capacity = capacity
        self._leaves = 1 << max(0, (capacity - 1).bit_length())
        self._tree = np.zeros(2 * self._leaves, np.float64)

    @property
    def total(self) -> float:
        return float(self._tree[1])

    def get(self, index: np.ndarray) -> np.ndarray:
        return self._tree[np.asarray(index) + self._leaves]

    def set(self, index: np.ndarray, value: np.ndarray) -> None:
        index = np.asarray(index, np.int64)
        value = np.asarray(value, np.float64)
        if index.size == 1:  # one path (an added sequence): Python numbers, the same sums
            self._set_one(int(index.reshape(-1)[0]), float(value.reshape(-1)[0]), index, value)
            return
        if np.any(index < 0) or np.any(index >= self.capacity):
            raise IndexError(f"expected indices in [0, {self.capacity}), got {index}")
        if np.any(value < 0) or not np.all(np.isfinite(value)):
            raise ValueError(f"expected finite priorities >= 0, got {value}")
        nodes = index + self._leaves
        tree = self._tree
        tree[nodes] = value
        # every leaf is equally deep, so all paths reach the root together; a node on two
        # paths is summed twice to the same value (cheaper than dropping the repeats)
        while nodes.size and nodes[0] > 1:
            nodes = nodes >> 1
            left = nodes << 1
            tree[nodes] = tree[left] + tree[left + 1]

    def _set_one(self, index: int, value: float, given_index, given_value) -> None:
        if not 0 <= index < self.capacity:
            raise IndexError(f"expected indices in [0, {self.capacity}), got {given_index}")
        if not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"expected finite priorities >= 0, got {given_value}")
        tree = self._tree
        node = index + self._leaves
        tree[node] = value
        while node > 1:
            node >>= 1
            tree[node] = float(tree[2 * node]) + float(tree[2 * node + 1])

    def find(self, mass: np.ndarray) -> np.ndarray:
        """Leaf index for each cumulative ``mass`` in ``[0, total)``."""
        mass = np.asarray(mass, np.float64).copy()
        node = np.ones(len(mass), np.int64)
        tree = self._tree
        while node[0] < self._leaves:
            node <<= 1  # the left child
            left = tree[node]
            go_right = mass >= left
            go_right &= tree[node + 1] > 0
            np.subtract(mass, left, out=mass, where=go_right)
            node += go_right
        return node - self._leaves

    def sample(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` leaf indices, stratified: one uniform draw in each of ``n`` equal segments."""
        total = self.total
        if total <= 0:
            raise ValueError("expected a tree with positive total priority, got 0")
        u = (np.arange(n) + rng.random(n)) / n * total
        return self.find(np.minimum(u, np.nextafter(total, 0)))


ReplayKind = Literal["uniform", "proportional", "rank", "greedy"]
"""How a buffer draws from its priorities (see the module docstring)."""
REPLAY_KINDS: tuple[str, ...] = get_args(ReplayKind)
MIXABLE_KINDS: tuple[str, ...] = ("proportional", "rank")
"""The kinds a uniform share can be mixed into."""


def rank_probabilities(priorities: np.ndarray, alpha: float) -> np.ndarray:
    """Rank-based ``P(i) = (1/rank_i)^alpha / sum_j (1/j)^alpha`` for ``priorities`` ``[N]``
    (rank 1 = the highest; equal priorities ranked by position, the earlier first)."""
    order = np.argsort(-np.asarray(priorities, np.float64), kind="stable")
    mass = (1.0 / np.arange(1, len(order) + 1)) ** alpha
    prob = np.empty(len(order), np.float64)
    prob[order] = mass / mass.sum()
    return prob


def greedy_indices(priorities: np.ndarray, n: int) -> np.ndarray:
    """The ``n`` indices of the highest ``priorities``, best first (equal priorities: the
    earlier first); cycles through all of them when ``n`` exceeds their number."""
    order = np.argsort(-np.asarray(priorities, np.float64), kind="stable")
    return np.resize(order, n)


class Sampled(NamedTuple):
    """A sample from one buffer."""

    index: np.ndarray
    """``[B]`` slot indices in the buffer."""
    weight: np.ndarray
    """``[B]`` importance weights (unnormalised: ``(N * P(i))^-beta``)."""
    batch: SequenceBatch


def sequence_priority(td_abs: np.ndarray, mask: np.ndarray, eta: float) -> np.ndarray:
    """``eta * max + (1 - eta) * mean`` of ``|delta|`` ``[B, T]`` over ``mask``; -> ``[B]``."""
    td = np.where(mask, np.abs(td_abs), 0.0)
    count = np.maximum(mask.sum(axis=1), 1)
    return eta * td.max(axis=1) + (1.0 - eta) * td.sum(axis=1) / count


class PrioritizedSequenceReplay:
    """A ring buffer of sequences sampled by their priorities as its ``kind`` says."""

    def __init__(
        self,
        capacity: int,
        alpha: float = 0.6,
        beta: float = 0.6,
        eta: float = 0.9,
        seed: int | None = None,
        name: str = "replay",
        persistent: bool = True,
        kind: ReplayKind = "proportional",
        uniform_share: float = 0.0,
    ):
        if kind not in REPLAY_KINDS:
            kinds = list(REPLAY_KINDS)
            raise ValueError(f"{name}: expected a replay kind in {kinds}, got {kind!r}")
        mixable = kind in MIXABLE_KINDS
        if not (0.0 <= uniform_share <= 1.0 and (mixable or uniform_share == 0.0)):
            raise ValueError(
                f"{name}: expected a uniform share in [0, 1] (0 for the {kind} kind), got "
                f"{uniform_share}"
            )
        self.kind = kind
        self.uniform_share = uniform_share
        self.capacity = capacity
        self.persistent = persistent
        """Saved with checkpoints when asked (False for buffers rebuilt from files)."""
        self.alpha = alpha
        self.beta = beta
        self.eta = eta
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.tree = SumTree(capacity)
        self.max_priority = 1.0
        self._raw = np.zeros(capacity, np.float64)  # priorities before the alpha exponent
        self._data: SequenceBatch | None = None
        self._next = 0
        self.size = 0
        self.added = 0

    def __len__(self) -> int:
        return self.size

    def _allocate(self, like: SequenceBatch) -> SequenceBatch:
        n = self.capacity
        return map_batch(lambda xs: np.zeros((n, *xs[0].shape[1:]), xs[0].dtype), like)

    def add(self, batch: SequenceBatch, priority: np.ndarray | None = None) -> np.ndarray:
        """Store ``batch`` (at the current max priority unless given); returns the slots."""
        b = len(batch)
        if b == 0:
            return np.zeros(0, np.int64)
        if self._data is None:
            self._data = self._allocate(batch)
        if b > self.capacity:
            batch = take(batch, np.arange(b - self.capacity, b))
            b = self.capacity
        slots = (self._next + np.arange(b)) % self.capacity
        # a slice where the slots do not wrap: the same writes, a fraction of the cost
        where = slots if self._next + b > self.capacity else slice(self._next, self._next + b)
        data = self._data
        for name in SequenceBatch._fields:
            mine, given = getattr(data, name), getattr(batch, name)
            if name in DICT_FIELDS:
                for k, v in mine.items():
                    v[where] = given[k]
            else:
                mine[where] = given
        p = np.full(b, self.max_priority) if priority is None else np.asarray(priority, float)
        self._raw[slots] = np.maximum(p, 1e-8)
        self.tree.set(slots, self._raw[slots] ** self.alpha)
        self._next = int((self._next + b) % self.capacity)
        self.size = min(self.capacity, self.size + b)
        self.added += b
        return slots

    def sample(self, n: int, beta: float | None = None) -> Sampled:
        """``n`` items, their slots and importance weights (exponent ``beta``, else the
        buffer's own)."""
        if self.size == 0:
            raise ValueError(f"expected a non-empty {self.name} buffer to sample from, got 0 items")
        index, prob = self._draw(n)
        beta = self.beta if beta is None else beta
        weight = (self.size * np.maximum(prob, 1e-12)) ** (-beta)
        return Sampled(index, weight, take(self._data, index))

    def probabilities(self) -> np.ndarray:
        """``P(i)`` of each stored item for one draw (uniform and greedy: ``1/N``, the value
        their importance weights use), the uniform share mixed in."""
        return self._mixed(self._kind_probabilities(np.arange(self.size)))

    def _kind_probabilities(self, index: np.ndarray) -> np.ndarray:
        """``P_kind(i)`` of the slots ``index`` (before the uniform share)."""
        if self.kind == "proportional":
            return self.tree.get(index) / self.tree.total
        if self.kind == "rank":
            return rank_probabilities(self._raw[: self.size], self.alpha)[index]
        return np.full(len(index), 1.0 / self.size)

    def _mixed(self, prob: np.ndarray) -> np.ndarray:
        u = self.uniform_share
        return prob if u == 0.0 else (1.0 - u) * prob + u / self.size

    def _draw(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """``n`` slot indices and the probability each was drawn with."""
        if self.kind == "greedy":  # deterministic: importance weights of 1
            return greedy_indices(self._raw[: self.size], n), np.full(n, 1.0 / self.size)
        uniform = self.rng.binomial(n, self.uniform_share) if self.uniform_share else 0
        m = n - uniform  # drawn by the kind, the rest uniformly
        rank = (
            rank_probabilities(self._raw[: self.size], self.alpha) if self.kind == "rank" else None
        )
        if self.kind == "uniform" or m == 0:
            index = self.rng.integers(0, self.size, n)
        else:
            if rank is None:
                index = self.tree.sample(m, self.rng)
            else:
                cdf = np.cumsum(rank)
                u = (np.arange(m) + self.rng.random(m)) / m * cdf[-1]  # stratified, as the tree
                index = np.minimum(np.searchsorted(cdf, u, side="right"), self.size - 1)
            if uniform:
                index = np.concatenate([index, self.rng.integers(0, self.size, uniform)])
        prob = self._kind_probabilities(index) if rank is None else rank[index]
        return index, self._mixed(prob)

    def update_priorities(self, index: np.ndarray, priority: np.ndarray) -> None:
        priority = np.maximum(np.asarray(priority, np.float64), 1e-8)
        self._raw[index] = priority
        self.tree.set(index, priority**self.alpha)
        self.max_priority = max(self.max_priority, float(priority.max(initial=0.0)))

    def priorities(self) -> np.ndarray:
        """Raw (un-exponentiated) priorities of the stored items."""
        return self._raw[: self.size].copy()

    def state_arrays(self) -> dict[str, np.ndarray]:
        """Contents, priorities and counters as plain arrays (for ``np.savez``)."""
        out = {
            "counters": np.array([self.capacity, self._next, self.size, self.added], np.int64),
            "max_priority": np.array(self.max_priority, np.float64),
            "priorities": self._raw[: self.size].copy(),
        }
        if self._data is not None and self.size:
            for name in SequenceBatch._fields:
                value = getattr(self._data, name)
                if name in DICT_FIELDS:
                    out.update({f"{name}.{k}": v[: self.size] for k, v in value.items()})
                else:
                    out[name] = value[: self.size]
        return out

    def load_state_arrays(self, arrays: dict[str, np.ndarray], where: str) -> None:
        """Restore what :meth:`state_arrays` gave; ``where`` names the source in errors."""
        try:
            capacity, nxt, size, added = (int(x) for x in arrays["counters"])
            priorities = np.asarray(arrays["priorities"], np.float64)
            max_priority = float(arrays["max_priority"])
            if capacity != self.capacity:
                raise ValueError(f"capacity {self.capacity}, got {capacity}")
            if not 0 <= size <= capacity or not 0 <= nxt < capacity or len(priorities) != size:
                raise ValueError(f"0 <= size <= capacity and one priority per item, got {size}")
            data = None
            if size:
                dicts = {
                    d: {k[len(d) + 1 :]: v for k, v in arrays.items() if k.startswith(d + ".")}
                    for d in DICT_FIELDS
                }
                fields = {n: arrays[n] for n in SequenceBatch._fields if n not in DICT_FIELDS}
                batch = SequenceBatch(**dicts, **fields)
                values = [*fields.values(), *(v for d in dicts.values() for v in d.values())]
                if any(len(v) != size for v in values):
                    raise ValueError(f"{size} items in every array")
                data = self._allocate(batch)
                map_batch(_assign(slice(0, size)), data, batch)
        except KeyError as exc:
            raise ValueError(f"{where}: {self.name}: expected array {exc}, got none") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {self.name}: expected {exc}") from None
        self._data = data
        self._next, self.size, self.added = nxt, size, added
        self.max_priority = max_priority
        self._raw[:] = 0.0
        self._raw[:size] = np.maximum(priorities, 1e-8)
        self.tree = SumTree(self.capacity)
        if size:
            self.tree.set(np.arange(size), self._raw[:size] ** self.alpha)


def _assign(where):
    """For ``map_batch``: write the second batch's arrays into the first's at ``where``."""

    def put(xs: list[np.ndarray]) -> np.ndarray:
        xs[0][where] = xs[1]
        return xs[0]

    return put


__all__ = [
    "REPLAY_KINDS",
    "PrioritizedSequenceReplay",
    "ReplayKind",
    "Sampled",
    "SumTree",
    "greedy_indices",
    "rank_probabilities",
    "sequence_priority",
]
