"""Real-time rates and the fixed-rate clock."""

from __future__ import annotations

import pytest

from demostudio.episode import make_env
from demostudio.play.timing import RateClock, RateMeter, realtime_fps, turn_based_default


@pytest.mark.parametrize(
    ("env_id", "kwargs", "fps"),
    [
        ("ALE/Breakout-v5", {}, 15.0),  # frameskip 4: 60 Hz play
        ("ALE/Breakout-v5", {"frameskip": 1}, 60.0),
        ("ALE/Pong-v5", {"frameskip": 2}, 30.0),
        ("MountainCar-v0", {}, 30.0),
        ("CartPole-v1", {}, 50.0),
        ("Acrobot-v1", {}, 15.0),
        ("LunarLander-v3", {}, 50.0),
    ],
)
def test_realtime_fps(env_id, kwargs, fps):
    env = make_env(env_id, kwargs)
    assert realtime_fps(env) == fps
    env.close()


def test_turn_based_default():
    assert turn_based_default("MiniGrid-DoorKey-8x8-v0")
    assert turn_based_default("BabyAI-KeyCorridorS3R1-v0")
    assert not turn_based_default("ALE/Pong-v5")


class FakeTime:
    def __init__(self):
        self.t = 0.0
        self.sleeps = []

    def now(self):
        return self.t

    def sleep(self, dt):
        self.sleeps.append(dt)
        self.t += dt


def test_rate_clock_keeps_a_fixed_schedule():
    ft = FakeTime()
    clock = RateClock(10, now=ft.now, sleep=ft.sleep)
    ticks = []
    for work in [0.02, 0.05, 0.0, 0.08]:
        ft.t += work
        clock.wait()
        ticks.append(round(ft.t, 6))
    assert ticks == [0.1, 0.2, 0.3, 0.4]


def test_rate_clock_does_not_burst_after_a_long_stall():
    ft = FakeTime()
    clock = RateClock(10, now=ft.now, sleep=ft.sleep)
    ft.t += 1.0  # a 1 s stall
    clock.wait()
    assert ft.sleeps == []
    ft.t += 0.01
    clock.wait()
    assert ft.t == pytest.approx(1.1)


def test_rate_clock_rejects_bad_fps():
    with pytest.raises(ValueError, match="expected fps > 0"):
        RateClock(0)


def test_rate_meter():
    ft = FakeTime()
    meter = RateMeter(1.0, now=ft.now)
    for _ in range(31):
        meter.tick()
        ft.t += 1 / 30
    assert meter.rate == pytest.approx(30, rel=0.05)
