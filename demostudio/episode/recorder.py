"""The recording wrapper: every episode of the wrapped env becomes one episode file.

Keyboard play, scripted policies and trained agents all record through :class:`RecordEpisodes`,
so every file in a demo folder went through the same code."""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import gymnasium as gym

from .actors import default_actor
from .envs import env_metadata
from .schema import MAX_SEED, SUFFIX
from .writer import EpisodeWriter


def fresh_seed() -> int:
    """A fresh 63-bit reset seed: one any ``--seed`` flag takes (up to 2**63-1, see
    ``demostudio.episode.schema.MAX_GIVEN_SEED``), so every recorded start can be played
    again by giving its seed."""
    return secrets.randbits(63)


def episode_filename(when: datetime | None = None) -> str:
    when = when or datetime.now()
    return f"{when:%Y%m%d-%H%M%S}-{when.microsecond // 1000:03d}-{secrets.token_hex(2)}{SUFFIX}"


class RecordEpisodes(gym.Wrapper):
    """Record every episode of ``env`` into ``directory`` as ``<time>-<id>.h5``.

    The env must be made with ``render_mode="rgb_array"`` when frames are recorded. Each reset
    without a seed draws a fresh 63-bit one, so every episode can be re-simulated. An episode
    is saved the moment it terminates or truncates; :meth:`end_episode` saves one early (marked
    truncated) and :meth:`discard_episode` drops it. ``set_keys`` tells the recorder which keys
    a keyboard controller held for the next step; ``set_actor`` who takes the steps from now on
    (a person taking over from an agent, and back).

    With ``background_close=True`` (interactive play) finishing a file (final flush, fsync,
    rename) happens on its writer thread, so the next episode starts without a stall; the path
    is reported at once and the file appears under it moments later. :meth:`wait_saved` (and
    :meth:`close`) wait for those files.

    ``clock`` gives each step's ``timestamps`` entry (Unix seconds): the wall clock, or the
    times a scripted player would have taken (it does not sleep through them).
    """

    def __init__(
        self,
        env: gym.Env,
        directory: str | os.PathLike,
        *,
        controller: str = "policy:unknown",
        player: str = "",
        key_map: dict[str, Any] | None = None,
        fps: float | None = None,
        record_frames: bool = True,
        attrs: dict[str, Any] | None = None,
        on_saved: Callable[[Path], None] | None = None,
        queue_size: int = 256,
        background_close: bool = False,
        clock: Callable[[], float] = time.time,
    ):
        super().__init__(env)
        if record_frames and env.render_mode != "rgb_array":
            raise ValueError(
                f"expected an env made with render_mode='rgb_array' to record frames, "
                f"got render_mode={env.render_mode!r}"
            )
        self.directory = Path(directory)
        self.controller = controller
        self.player = player
        self.key_map = key_map
        self.fps = fps
        self.record_frames = record_frames
        self.extra_attrs = dict(attrs or {})
        self.on_saved = on_saved
        self.queue_size = queue_size
        self.background_close = background_close
        self.clock = clock
        self.saved: list[Path] = []
        self._closing: list[EpisodeWriter] = []
        self.last_frame = None
        self.blocked_puts = 0
        self._writer: EpisodeWriter | None = None
        self._keys: Sequence[str] = ()
        self._actor: str | None = None  # None: the controller
        self._caller_busy = False
        self._meta = env_metadata(env)

    # ---- gymnasium API ---------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        if self._writer is not None:
            self.end_episode(keep=self._writer.steps > 0)
        seed = fresh_seed() if seed is None else int(seed)
        if not 0 <= seed <= MAX_SEED:  # a file the reader would refuse
            raise ValueError(f"seed: expected an integer from 0 to 2**64-1, got {seed}")
        obs, info = self.env.reset(seed=seed, options=options)
        now = self.clock()
        frame = self.env.render() if self.record_frames else None
        self.last_frame = frame
        attrs = {
            **self._meta,
            "seed": seed,
            "reset_options": options,
            "controller": self.controller,
            "player": self.player,
            "key_map": self.key_map,
            "fps": self.fps,
            "recorded_at": datetime.now(timezone.utc).astimezone().isoformat(),
            "length": 0,
            "total_return": 0.0,
            "terminated": False,
            "truncated": False,
            **self.extra_attrs,
        }
        self._writer = EpisodeWriter(
            self.directory / episode_filename(),
            self.env.observation_space,
            self.env.action_space,
            attrs,
            record_frames=self.record_frames,
            queue_size=self.queue_size,
        )
        if self._actor is not None:
            self._writer.set_actor(self._actor)
        if self._caller_busy:
            self._writer.caller_busy()
        self._writer.reset(obs, info, frame, now)
        return obs, info

    def step(self, action):
        if self._writer is None:
            raise RuntimeError("RecordEpisodes: call reset() before step()")
        obs, reward, terminated, truncated, info = self.env.step(action)
        now = self.clock()
        frame = self.env.render() if self.record_frames else None
        self.last_frame = frame
        self._writer.step(
            action, obs, reward, terminated, truncated, info, frame, now, keys=self._keys
        )
        self._keys = ()
        if terminated or truncated:
            self.end_episode(keep=True)
        return obs, reward, terminated, truncated, info

    def close(self):
        """Save an episode in progress (marked truncated) if it has steps, wait for every file
        to be on disk, then close the env."""
        if self._writer is not None:
            self.end_episode(keep=self._writer.steps > 0)
        self.wait_saved()
        super().close()

    def wait_saved(self) -> list[Path]:
        """Wait for episodes being finished in the background; returns every saved path."""
        closing, self._closing = self._closing, []
        for writer in closing:
            writer.wait()
        return list(self.saved)

    # ---- recording control -----------------------------------------------------------------

    def set_keys(self, keys: Sequence[str]) -> None:
        """The key names held for the next step (stored with it)."""
        self._keys = tuple(keys)

    def set_actor(self, name: str | None) -> None:
        """The steps from now on (also in later episodes) are taken by ``name``:
        ``"person:<player>"`` for a person, ``"policy:<name>"`` for an agent; ``None`` goes
        back to the controller."""
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"expected an actor name like 'person:ann' or None, got {name!r}")
        self._actor = name
        if self._writer is not None:
            self._writer.set_actor(name if name is not None else self._writer.default_actor)

    @property
    def actor(self) -> str:
        """Who takes the next step."""
        return self._actor or default_actor(self.controller, self.player)

    def caller_busy(self) -> None:
        """A real-time loop starts a tick: defer the writer's work until :meth:`caller_idle`
        (bounded; see :meth:`EpisodeWriter.caller_busy`)."""
        self._caller_busy = True
        if self._writer is not None:
            self._writer.caller_busy()

    def caller_idle(self) -> None:
        """A real-time loop waits for its next tick: the writer may work now."""
        self._caller_busy = False
        if self._writer is not None:
            self._writer.caller_idle()

    def set_attrs(self, **attrs: Any) -> None:
        """Extra root attributes for the episode in progress (tags, notes, ...)."""
        if self._writer is not None:
            self._writer.set_attrs(**attrs)

    @property
    def recording(self) -> bool:
        return self._writer is not None

    @property
    def episode_steps(self) -> int:
        return self._writer.steps if self._writer is not None else 0

    @property
    def episode_return(self) -> float:
        return self._writer.total_return if self._writer is not None else 0.0

    def end_episode(self, keep: bool = True) -> Path | None:
        """Finish the episode in progress: save it (truncated if it had not ended) or drop it."""
        writer, self._writer = self._writer, None
        if writer is None:
            return None
        self.blocked_puts += writer.blocked_puts
        if not keep:
            writer.discard()
            return None
        path = writer.close(truncated=True, wait=not self.background_close)
        if self.background_close:
            self._closing = [w for w in self._closing if not w.done] + [writer]
        self.saved.append(path)
        if self.on_saved is not None:
            self.on_saved(path)
        return path

    def discard_episode(self) -> None:
        self.end_episode(keep=False)
