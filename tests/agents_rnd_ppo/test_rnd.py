"""RND: the target network never changes while the predictor learns; the predictor is
trained on the update-proportion share; seen observations become less novel than unseen
ones; the whole RND state survives a weights-only checkpoint."""

from __future__ import annotations

import io

import numpy as np
import torch

from agents.rnd_ppo.rnd import RND, IntrinsicReward


def test_target_never_changes_while_predictor_learns():
    torch.manual_seed(0)
    ir, rnd = IntrinsicReward((8,), num_envs=4, gamma_int=0.99), RND.build((8,), 16, 32)
    target_before = {k: v.clone() for k, v in rnd.target.state_dict().items()}
    predictor_before = {k: v.clone() for k, v in rnd.predictor.state_dict().items()}
    assert all(not p.requires_grad for p in rnd.target.parameters())
    opt = torch.optim.Adam(rnd.predictor.parameters(), lr=1e-2)
    obs = torch.randn(256, 8) * 3 + 1
    ir.observe(obs)
    gen = torch.Generator().manual_seed(0)
    losses = []
    for _ in range(50):
        loss = ir.loss(rnd, obs, update_proportion=0.25, generator=gen)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss.detach()))
    for k, v in rnd.target.state_dict().items():
        torch.testing.assert_close(v, target_before[k], rtol=0, atol=0)
    assert all(p.grad is None for p in rnd.target.parameters())
    changed = [
        not torch.equal(v, predictor_before[k]) for k, v in rnd.predictor.state_dict().items()
    ]
    assert all(changed)
    assert np.mean(losses[-5:]) < 0.2 * np.mean(losses[:5])


def test_predictor_loss_uses_the_update_proportion_share():
    torch.manual_seed(1)
    rnd = RND.build((4,), embed_dim=8, hidden=16)
    obs = torch.randn(4000, 4)
    err = rnd.prediction_error(obs).detach()
    loss = rnd.predictor_loss(obs, 0.25, torch.Generator().manual_seed(7))
    keep = torch.rand(4000, generator=torch.Generator().manual_seed(7)) < 0.25
    assert abs(float(keep.float().mean()) - 0.25) < 0.03
    torch.testing.assert_close(loss.detach(), err[keep].mean())
    # a batch whose samples are all left out gives a zero loss
    one = rnd.predictor_loss(obs[:1], 1e-9)
    assert float(one.detach()) == 0.0


def test_seen_observations_earn_less_intrinsic_reward_than_new_ones():
    torch.manual_seed(2)
    ir, rnd = IntrinsicReward((32,), num_envs=2, gamma_int=0.99), RND.build((32,), 16, 64)
    seen, unseen = torch.randn(16, 32), torch.randn(16, 32)  # same distribution
    ir.observe(torch.cat([seen, unseen]))
    opt = torch.optim.Adam(rnd.predictor.parameters(), lr=3e-3)
    for _ in range(200):
        loss = ir.loss(rnd, seen, update_proportion=1.0)
        opt.zero_grad()
        loss.backward()
        opt.step()
    e_seen = ir.raw(rnd, seen.reshape(8, 2, 32))
    e_new = ir.raw(rnd, unseen.reshape(8, 2, 32))
    assert e_seen.shape == (8, 2)
    assert float(e_new.mean()) > 100 * float(e_seen.mean())
    # the scaled reward keeps the ordering within a rollout
    r = ir.rewards(rnd, torch.stack([seen[:2], unseen[:2]]))
    assert r.shape == (2, 2) and float(r[1].min()) > float(r[0].max())


def test_image_networks_take_stacked_frames():
    torch.manual_seed(3)
    rnd = RND.build((1, 84, 84), embed_dim=32, hidden=64)
    assert any(isinstance(m, torch.nn.Conv2d) for m in rnd.target.modules())
    err = rnd.prediction_error(torch.randn(5, 1, 84, 84))
    assert err.shape == (5,) and bool((err > 0).all())


def test_rnd_state_roundtrips_through_weights_only_load():
    torch.manual_seed(4)
    ir = IntrinsicReward((1, 36, 36), num_envs=3, gamma_int=0.99)
    rnd = RND.build((1, 36, 36), embed_dim=8, hidden=16)
    frames = torch.randint(0, 255, (4, 3, 1, 36, 36)).float()
    ir.observe(frames.reshape(-1, 1, 36, 36))
    ir.rewards(rnd, frames)
    buf = io.BytesIO()
    torch.save({"stats": ir.state_dict(), "rnd": rnd.state_dict()}, buf)
    buf.seek(0)
    torch.manual_seed(99)  # a different random target until the state is loaded
    fresh, fresh_rnd = IntrinsicReward((1, 36, 36), 3, 0.99), RND.build((1, 36, 36), 8, 16)
    saved = torch.load(buf, weights_only=True)
    fresh.load_state_dict(saved["stats"])
    fresh_rnd.load_state_dict(saved["rnd"])
    torch.testing.assert_close(fresh.rewards(fresh_rnd, frames), ir.rewards(rnd, frames))
