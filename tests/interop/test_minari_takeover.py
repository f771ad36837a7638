"""Who acted survives a Minari round trip: a take-over episode exported and imported back
keeps each step's actor (the import used to write every step as the controller's)."""

from __future__ import annotations

import numpy as np
import pytest

from demostudio.controllers import scripted_controller
from demostudio.episode import RecordEpisodes, load_episode, make_env, person_mask, read_summary
from demostudio.interop.minari import export_minari, import_minari

AGENT = "policy:r2d3"
# (first step, actor) of each stretch: Ann takes over twice, Bo once
STRETCHES = {0: AGENT, 10: "person:ann", 25: AGENT, 30: "person:ann", 40: "person:bo"}


@pytest.fixture
def takeover_episode(tmp_path):
    rec = RecordEpisodes(
        make_env("MountainCar-v0", render_mode="rgb_array"),
        tmp_path / "src" / "MountainCar-v0",
        controller=AGENT,
    )
    ctrl = scripted_controller("MountainCar-v0")
    obs, _ = rec.reset(seed=7)
    for t in range(50):
        if t in STRETCHES:
            rec.set_actor(STRETCHES[t])
        obs, *_ = rec.step(ctrl.act(rec, obs))
    rec.close()
    return rec.saved[0]


def test_takeovers_round_trip_through_minari(takeover_episode, minari_root, tmp_path):
    export_minari([takeover_episode], "who/mountaincar-takeover-v0", frames=True)
    (back,) = import_minari("who/mountaincar-takeover-v0", tmp_path / "back")
    a, b = load_episode(takeover_episode), load_episode(back)
    assert b.actor_names == a.actor_names == [AGENT, "person:ann", "person:bo"]
    np.testing.assert_array_equal(b.actors, a.actors)
    mask = person_mask(b.actors, b.actor_names)
    assert mask.sum() == 15 + 10 + 10 and not mask[:10].any() and mask[10:25].all()
    s = read_summary(back)
    assert s.takeovers == 2 and s.human_share == pytest.approx(35 / 50)
