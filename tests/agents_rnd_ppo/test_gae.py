"""GAE for the two heads, by hand: the extrinsic return stops at an episode end, the
intrinsic return runs on across it."""

from __future__ import annotations

import pytest
import torch

from agents.rnd_ppo.gae import extrinsic_gae, intrinsic_gae

# One rollout of T = 3 steps from B = 2 envs with the same rewards and values; env 0's
# episode ends after step 1, env 1's does not. gamma = lambda = 0.5.
REWARD = torch.tensor([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
VALUE = torch.tensor([[0.5, 0.5], [1.0, 1.0], [1.5, 1.5]])
BOOTSTRAP = torch.tensor([2.0, 2.0])
DONE = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]])


def test_extrinsic_gae_stops_at_episode_end():
    out = extrinsic_gae(REWARD, VALUE, BOOTSTRAP, DONE, gamma=0.5, lam=0.5)
    # env 0: delta = [1 + .5*1 - .5, 2 + 0 - 1, 3 + .5*2 - 1.5] = [1, 1, 2.5]
    #        A_2 = 2.5; A_1 = 1 (done: nothing from step 2); A_0 = 1 + .25 * 1 = 1.25
    # env 1: delta_1 = 2 + .5*1.5 - 1 = 1.75; A_1 = 1.75 + .25*2.5 = 2.375;
    #        A_0 = 1 + .25 * 2.375 = 1.59375
    expected = torch.tensor([[1.25, 1.59375], [1.0, 2.375], [2.5, 2.5]])
    torch.testing.assert_close(out.advantages, expected)
    torch.testing.assert_close(out.returns, expected + VALUE)


def test_intrinsic_gae_ignores_episode_end():
    out = intrinsic_gae(REWARD, VALUE, BOOTSTRAP, gamma=0.5, lam=0.5)
    # both envs as env 1 above: the episode end of env 0 changes nothing
    expected = torch.tensor([[1.59375, 1.59375], [2.375, 2.375], [2.5, 2.5]])
    torch.testing.assert_close(out.advantages, expected)
    torch.testing.assert_close(out.returns, expected + VALUE)


def test_lambda_one_gives_discounted_returns():
    # lambda = 1: R_t is the discounted sum of rewards up to the episode end, plus the
    # discounted bootstrap if the rollout ends first. env 0: R = [1 + .5*2, 2, 3 + .5*2].
    ext = extrinsic_gae(REWARD, VALUE, BOOTSTRAP, DONE, gamma=0.5, lam=1.0)
    torch.testing.assert_close(ext.returns[:, 0], torch.tensor([2.0, 2.0, 4.0]))
    # intrinsic: R_2 = 4, R_1 = 2 + .5*4 = 4, R_0 = 1 + .5*4 = 3 (through the episode end)
    intr = intrinsic_gae(REWARD, VALUE, BOOTSTRAP, gamma=0.5, lam=1.0)
    torch.testing.assert_close(intr.returns[:, 0], torch.tensor([3.0, 4.0, 4.0]))


def test_lambda_zero_is_one_step_td():
    out = extrinsic_gae(REWARD, VALUE, BOOTSTRAP, DONE, gamma=0.5, lam=0.0)
    torch.testing.assert_close(out.advantages[:, 0], torch.tensor([1.0, 1.0, 2.5]))


def test_shape_errors_name_the_expected_shape():
    with pytest.raises(ValueError, match=r"expected bootstrap of shape \[B\]"):
        extrinsic_gae(REWARD, VALUE, torch.zeros(3), DONE, 0.9, 0.9)
    with pytest.raises(ValueError, match="expected done of shape"):
        extrinsic_gae(REWARD, VALUE, BOOTSTRAP, DONE[:2], 0.9, 0.9)
