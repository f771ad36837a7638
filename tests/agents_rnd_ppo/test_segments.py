"""GAE over the actors' segments and the intrinsic-return scaling followed per env, by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.rnd_ppo.gae import segment_gae
from agents.rnd_ppo.normalize import IntrinsicRewardScaler
from agents.rnd_ppo.rollout import scale_by_stream

G, LAM = 0.9, 0.5


def col(*xs):
    return torch.tensor(xs, dtype=torch.float32)[:, None]  # [T, 1]


def test_mid_episode_segment_bootstraps_from_its_last_observation():
    # 2 steps, then the observation after the segment (value 10)
    r, v, m = col(1.0, 2.0), col(3.0, 4.0, 10.0), col(1, 1, 0).bool()
    out = segment_gae(r, v, m, col(0.0, 0.0), G, LAM)
    d1 = 2.0 + G * 10.0 - 4.0
    d0 = 1.0 + G * 4.0 - 3.0
    assert out.advantages[:, 0].tolist() == pytest.approx([d0 + G * LAM * d1, d1])
    assert out.returns[:, 0].tolist() == pytest.approx([d0 + G * LAM * d1 + 3.0, d1 + 4.0])


def test_terminal_cuts_extrinsic_but_not_intrinsic_and_padding_is_zero():
    # step 0 ends the episode by termination; positions 2.. are padding
    r, v, m = col(1.0, 0.0), col(3.0, 7.0, 0.0), col(1, 0, 0).bool()
    ext = segment_gae(r, v, m, col(1.0, 0.0), G, LAM)
    assert ext.advantages[:, 0].tolist() == pytest.approx([1.0 - 3.0, 0.0])
    intr = segment_gae(r, v, m, None, G, LAM)  # non-episodic: V(final observation) = 7
    assert intr.advantages[:, 0].tolist() == pytest.approx([1.0 + G * 7.0 - 3.0, 0.0])
    assert intr.returns[1, 0] == 0.0


def test_truncation_bootstraps_from_the_final_observation():
    r, v, m = col(1.0, 0.0), col(3.0, 5.0, 0.0), col(1, 0, 0).bool()
    ext = segment_gae(r, v, m, col(0.0, 0.0), G, LAM)  # time limit: not terminal
    assert ext.advantages[0, 0] == pytest.approx(1.0 + G * 5.0 - 3.0)


def test_intrinsic_return_is_followed_per_env_across_segments():
    scaler = IntrinsicRewardScaler(gamma=0.5, num_envs=2)
    raw = np.array([[1.0, 2.0, 4.0], [1.0, 0.0, 4.0]])  # [S=2, B=3]
    real = np.array([[True, True, True], [True, False, True]])
    env = np.array([0, 1, 0])  # segment 2 continues env 0's stream
    scaled = scale_by_stream(scaler, raw, real, env)
    # env 0: 1, 0.5 + 1 = 1.5, 0.75 + 4 = 4.75, 2.375 + 4 = 6.375; env 1: 2
    assert scaler.filter.returns.tolist() == pytest.approx([6.375, 2.0])
    expected_var = np.var([1.0, 1.5, 2.0, 4.75, 6.375])
    assert scaler.rms.var == pytest.approx(expected_var)
    assert scaled[1, 1] == 0.0 and scaled[0, 2] == pytest.approx(4.0 / np.sqrt(expected_var))


def test_intrinsic_return_after_a_terminal_step_bootstraps_from_the_start_states():
    from agents.rnd_ppo.config import RNDPPOConfig
    from agents.rnd_ppo.rollout import after_terminal, rollout_targets

    # step 0 ends the episode by termination; V_int(terminal observation) = 7 is never a
    # regression target, the next episode starts from states worth 2 on average
    r, v, m, term = col(1.0, 0.0), col(3.0, 7.0, 0.0), col(1, 0, 0).bool(), col(1.0, 0.0)
    assert after_terminal(v, term, None) is v
    assert after_terminal(v, term, 2.0)[:, 0].tolist() == [3.0, 2.0, 0.0]
    cfg = RNDPPOConfig(gamma_int=G, gae_lambda=LAM)
    zeros = torch.zeros(3, 1)
    out = rollout_targets(cfg, zeros, v, r, term, m, r, start_int=2.0)
    assert out.ret_int[0, 0] == pytest.approx(1.0 + G * 2.0)
    assert out.advantage[0, 0] == pytest.approx(cfg.ext_coef * 1.0 + (1.0 + G * 2.0 - 3.0))
    # no episode start in the rollout: the terminal observation's value, as before
    old = rollout_targets(cfg, zeros, v, r, term, m, r)
    assert old.ret_int[0, 0] == pytest.approx(1.0 + G * 7.0)
    # a time-limit end (not terminal) keeps bootstrapping from its final observation
    trunc = rollout_targets(cfg, zeros, v, r, col(0.0, 0.0), m, r, start_int=2.0)
    assert trunc.ret_int[0, 0] == pytest.approx(1.0 + G * 7.0)
