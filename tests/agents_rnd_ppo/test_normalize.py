"""Running statistics against numpy over the concatenated data; intrinsic reward scaling
by the std of the non-episodic discounted intrinsic return; checkpoint round trips."""

from __future__ import annotations

import io

import numpy as np
import pytest
import torch

from agents.rnd_ppo.normalize import (
    IntrinsicRewardScaler,
    ObservationNormalizer,
    RewardForwardFilter,
    RunningMeanStd,
)


def weights_only_roundtrip(state: dict) -> dict:
    buf = io.BytesIO()
    torch.save(state, buf)
    buf.seek(0)
    return torch.load(buf, weights_only=True)


def test_running_mean_std_equals_numpy_over_concatenated_batches():
    rng = np.random.default_rng(0)
    batches = [rng.normal(3.0, 2.0, size=(n, 2, 3)) * rng.uniform(0.5, 4) for n in (1, 7, 0, 64)]
    rms = RunningMeanStd((2, 3))
    for b in batches:
        rms.update(b)
    data = np.concatenate(batches)
    np.testing.assert_allclose(rms.mean, data.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(rms.var, data.var(axis=0), rtol=1e-12)
    assert rms.count == len(data)
    assert rms.mean.dtype == np.float64


def test_running_mean_std_accepts_torch_and_checks_shape():
    rms = RunningMeanStd((3,))
    rms.update(torch.arange(6.0).reshape(2, 3))
    np.testing.assert_allclose(rms.mean, [1.5, 2.5, 3.5])
    with pytest.raises(ValueError, match=r"expected a batch of shape \[N, \*\(3,\)\]"):
        rms.update(np.zeros((2, 4)))


def test_observation_normalizer_formula_and_clip():
    rng = np.random.default_rng(1)
    data = rng.normal(10.0, 3.0, size=(500, 4)).astype(np.float32)
    norm = ObservationNormalizer((4,), clip=5.0)
    norm.update(data[:200])
    norm.update(data[200:])
    x = torch.tensor([[10.0, 13.0, 40.0, -40.0]])
    out = norm(x)
    expected = (x.double().numpy() - data.astype(np.float64).mean(0)) / np.sqrt(
        data.astype(np.float64).var(0) + 1e-8
    )
    np.testing.assert_allclose(out.numpy(), np.clip(expected, -5, 5), rtol=1e-5)
    assert out.dtype == torch.float32
    assert float(out[0, 2]) == 5.0 and float(out[0, 3]) == -5.0
    # leading dims are free: [T, B, 4]
    assert norm(torch.zeros(3, 2, 4)).shape == (3, 2, 4)


def test_normalizer_state_roundtrips_through_weights_only_load():
    norm = ObservationNormalizer((2, 2))
    norm.update(np.random.default_rng(2).normal(size=(50, 2, 2)))
    fresh = ObservationNormalizer((2, 2))
    fresh.load_state_dict(weights_only_roundtrip(norm.state_dict()))
    x = torch.randn(5, 2, 2)
    torch.testing.assert_close(fresh(x), norm(x))
    assert fresh.rms.count == norm.rms.count
    with pytest.raises(ValueError, match=r"expected mean of shape \(3,\)"):
        ObservationNormalizer((3,)).load_state_dict(norm.state_dict())


def test_forward_filter_is_a_discounted_running_sum():
    f = RewardForwardFilter(gamma=0.5, num_envs=2)
    np.testing.assert_allclose(f.update([1.0, 2.0]), [1.0, 2.0])
    np.testing.assert_allclose(f.update([1.0, 0.0]), [1.5, 1.0])
    np.testing.assert_allclose(f.update([0.0, 4.0]), [0.75, 4.5])


def test_intrinsic_reward_scaled_by_std_of_intrinsic_return():
    rng = np.random.default_rng(3)
    gamma, t, b = 0.9, 6, 3
    first = rng.exponential(size=(t, b))
    second = rng.exponential(size=(t, b))
    scaler = IntrinsicRewardScaler(gamma, num_envs=b)
    out1 = scaler(torch.from_numpy(first))
    out2 = scaler(torch.from_numpy(second))
    # by hand: the returns run on across rollouts (never reset), the std covers all of them
    returns, running = [], np.zeros(b)
    for r in np.concatenate([first, second]):
        running = gamma * running + r
        returns.append(running.copy())
    returns = np.array(returns)
    std1 = np.sqrt(returns[:t].var() + 1e-8)
    std2 = np.sqrt(returns.var() + 1e-8)
    np.testing.assert_allclose(out1.numpy(), first / std1, rtol=1e-10)
    np.testing.assert_allclose(out2.numpy(), second / std2, rtol=1e-10)


def test_intrinsic_reward_scaling_removes_the_reward_scale():
    raw = torch.from_numpy(np.random.default_rng(4).exponential(size=(8, 4)))
    a = IntrinsicRewardScaler(0.99, 4)(raw)
    b = IntrinsicRewardScaler(0.99, 4)(raw * 1000.0)
    torch.testing.assert_close(a, b)


def test_scaler_state_roundtrip_continues_exactly():
    raw = torch.from_numpy(np.random.default_rng(5).exponential(size=(4, 2, 5)))
    scaler = IntrinsicRewardScaler(0.99, 5)
    scaler(raw[0])
    fresh = IntrinsicRewardScaler(0.99, 5)
    fresh.load_state_dict(weights_only_roundtrip(scaler.state_dict()))
    torch.testing.assert_close(fresh(raw[1]), scaler(raw[1]))
