"""Re-rendering the frames of an imported episode by re-simulating it from its reset seed.

Every re-simulated step is checked against the stored one; the first difference raises
:class:`Diverged`, and the caller writes the episode without frames and says why."""

from __future__ import annotations

from typing import Any

import numpy as np

from demostudio.episode import UnknownEnvError, describe_difference, remake_env

from .codec import plain_action


class Diverged(Exception):
    """The re-simulation does not reproduce the stored episode."""

    def __init__(self, step: int, field: str, detail: str):
        self.step = step
        self.field = field
        self.detail = detail
        where = "at reset" if step < 0 else f"at step {step}"
        super().__init__(f"re-simulation diverged {where} in {field}: {detail}")


class Resimulation:
    """The env of ``attrs`` reset with ``seed``; :meth:`step` replays one stored step and
    returns the rendered frame."""

    def __init__(
        self,
        attrs: dict[str, Any],
        seed: int,
        options: dict | None,
        first_obs: Any,
        image_tolerance: float | None = None,
    ):
        self.image_tolerance = image_tolerance
        try:
            self.env = remake_env(attrs, render_mode="rgb_array")
        except UnknownEnvError as exc:
            raise Diverged(-1, "env", str(exc)) from None
        try:
            obs, _ = self.env.reset(seed=int(seed), options=options)
            self._check(-1, "observations", describe_difference(first_obs, obs, image_tolerance))
            self.first_frame = self._render(-1)
        except BaseException:
            self.env.close()
            raise

    def _render(self, t: int) -> np.ndarray:
        frame = self.env.render()
        if not isinstance(frame, np.ndarray) or frame.ndim != 3 or frame.shape[-1] != 3:
            got = type(frame).__name__ if not isinstance(frame, np.ndarray) else frame.shape
            raise Diverged(t, "frames", f"expected an RGB frame (H, W, 3), the env rendered {got}")
        return frame.astype(np.uint8, copy=False)

    @staticmethod
    def _check(t: int, field: str, problem: str | None) -> None:
        if problem is not None:
            raise Diverged(t, field, problem)

    def step(
        self, t: int, action: Any, obs: Any, reward: float, terminated: bool, truncated: bool
    ) -> np.ndarray:
        live_obs, live_reward, live_term, live_trunc, _ = self.env.step(plain_action(action))
        if not np.isclose(float(live_reward), float(reward), rtol=1e-6, atol=1e-8):
            raise Diverged(t, "rewards", f"stored {reward:g}, re-simulated {live_reward:g}")
        for field, stored, live in (
            ("terminations", terminated, live_term),
            ("truncations", truncated, live_trunc),
        ):
            if bool(live) != bool(stored):
                raise Diverged(t, field, f"stored {bool(stored)}, re-simulated {bool(live)}")
        self._check(t, "observations", describe_difference(obs, live_obs, self.image_tolerance))
        return self._render(t)

    def close(self) -> None:
        self.env.close()
