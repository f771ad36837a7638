"""The core's seams: toy agents defined here train through the run shell with each schedule,
extras round-trip through sequences and replay, target rules move targets by the stated
amount, restore rebuilds every registered agent (and previous-format checkpoints), and the
take-over hook steers the agent's recurrent inputs."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np
import pytest
import torch

from agents import registry
from agents.core.agent import Agent, Phase, replay_ratio_phase
from agents.core.batch import LossOutput, to_torch, uniform_sample
from agents.core.checkpoint import CheckpointError, save_checkpoint
from agents.core.config import DemoConfig, ReplayAgentConfig, config_to_dict
from agents.core.controller import AgentController
from agents.core.demos import DemoFiles, context_demos, demo_sequences
from agents.core.learner import Learner, Optim
from agents.core.logger import read_metrics
from agents.core.losses import unroll
from agents.core.mixing import DataSource
from agents.core.networks import HeadSpec, RecurrentNetwork, RecurrentQNetwork
from agents.core.policy import BatchPolicy, EpsilonGreedy, SoftmaxSample
from agents.core.preprocess import Leaf, Preprocessor, make_preprocessor
from agents.core.replay import PrioritizedSequenceReplay
from agents.core.restore import restore_agent
from agents.core.run import train
from agents.core.schedules import Offline, OnPolicy
from agents.core.sequences import EndBehavior, SequenceWriter, with_extras
from agents.core.targets import HardCopy, Polyak
from demostudio.episode import make_env

SMALL = dict(env="CartPole-v1", num_actors=2, hidden=16, lstm=16, burn_in=0, trace=8, period=8,
             batch_size=8, min_replay=4, eval_episodes=1, progress=False, tensorboard=False,
             device="cpu")  # fmt: skip


def _policy_gradient(learner, batch) -> LossOutput:
    """REINFORCE on the segment's reward-to-go (toy on-policy loss reading the extras)."""
    out = unroll(learner.network, batch, 0)
    logp = torch.log_softmax(out.heads["logits"], -1)
    taken = logp.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
    m = batch.mask.float()
    ratio = torch.exp(taken - batch.extras["log_prob"]) * m
    advantage = batch.extras["return"] - out.heads["value"].detach()
    loss = (
        -(ratio * advantage).sum() / m.sum()
        + ((batch.extras["return"] - out.heads["value"]) ** 2 * m).sum() / m.sum()
    )
    deviation = float((ratio - m).abs().max().detach())
    ToyOnPolicy.deviations.append(deviation)
    return LossOutput(loss, metrics={"loss": float(loss.detach()), "ratio_max_dev": deviation})


class ToyOnPolicy(Agent):
    """A recurrent actor-critic on rollouts: logits + value heads, extras from the policy."""

    name = "toy-onpolicy"
    config_cls = ReplayAgentConfig
    uses_replay = False
    rollouts: ClassVar[list] = []
    deviations: ClassVar[list] = []

    def heads(self):
        return {"logits": HeadSpec("logits"), "value": HeadSpec("value")}

    def loss(self):
        return _policy_gradient

    def acting_selector(self, n):
        return SoftmaxSample("logits", values=("value",))

    def phases(self):
        return [Phase("train", OnPolicy(16, 2, 4, self.cfg.total_env_steps), log_every=64)]

    def on_rollout(self, ctx, batch):
        self.rollouts.append((ctx.learner.updates, batch))
        rtg = np.flip(np.cumsum(np.flip(batch.reward * batch.mask, 1), 1), 1).copy()
        return with_extras(batch, **{"return": rtg.astype(np.float32)})


class ToyOffline(Agent):
    """Cross-entropy on demo actions from a named demo source; no env step to learn."""

    name = "toy-offline"
    uses_replay = False
    final_eval_always = True

    def heads(self):
        return {"logits": HeadSpec("logits")}

    def loss(self):
        def ce(learner, batch):
            logits = unroll(learner.network, batch, 0).heads["logits"]
            ce = torch.nn.functional.cross_entropy(
                logits.flatten(0, 1), batch.action.flatten(), reduction="none"
            )
            m = batch.mask.flatten().float()
            loss = (ce * m).sum() / m.sum()
            assert bool(batch.is_demo.all())  # the source is flagged demo, not "source 1"
            return LossOutput(loss, metrics={"loss": float(loss.detach())})

        return ce

    def acting_selector(self, n):
        return EpsilonGreedy(np.zeros(n), head="logits")

    def sources(self, ctx):
        demos = context_demos(DemoFiles.of(self.cfg), ctx)
        seqs = demo_sequences(demos, ctx.preprocess, ctx.network, 9, 8,
                              EndBehavior.ZERO_PAD, ctx.device)  # fmt: skip
        buf = PrioritizedSequenceReplay(len(seqs), 0.0, 0.0, seed=0, name="demos")
        buf.add(seqs)
        return [DataSource("demos", buf, demo=True)]

    def phases(self):
        return [Phase("train", Offline(60, 8), log_every=20, eval_every=30)]


class ToyReplay(Agent):
    """Reactor-shaped: logits + distributional Q heads, a Polyak target, mu in the extras,
    a loss that returns no priorities."""

    name = "toy-replay"
    config_cls = ReplayAgentConfig
    uses_replay = True
    seen_mu: ClassVar[list] = []

    def heads(self):
        return {"logits": HeadSpec("logits"), "dist_q": HeadSpec("distributional_q", atoms=5)}

    def target_rules(self):
        return {"main": Polyak(0.1)}

    def acting_selector(self, n):
        return SoftmaxSample("logits")

    def phases(self):
        return [replay_ratio_phase(self.cfg)]

    def loss(self):
        def loss(learner, batch):
            out = unroll(learner.network, batch, self.cfg.burn_in)
            tgt = unroll(learner.target, batch, 0, grad=False)
            assert out.heads["dist_q"].shape[-2:] == (2, 5)
            mu = batch.extras["mu"]
            self.seen_mu.append(float(mu[batch.mask].min()))
            logp = torch.log_softmax(out.heads["logits"], -1)
            taken = logp.gather(-1, batch.action.unsqueeze(-1)).squeeze(-1)
            m = batch.mask.float()
            kl = (torch.softmax(tgt.heads["logits"], -1) * -logp).sum(-1)
            loss = ((-taken * batch.reward + 0.1 * kl) * m).sum() / m.sum()
            return LossOutput(loss, metrics={"loss": float(loss.detach())})

        return loss


def test_toy_agents_train_through_the_shell_with_each_schedule(tmp_path, cartpole_demos):
    # replay ratio: Polyak target, extras mu from the behaviour policy, no priorities
    cfg = ReplayAgentConfig(**SMALL, total_env_steps=400, env_steps_per_update=4.0,
                            eval_every=200, run_dir=tmp_path / "replay")  # fmt: skip
    result = train(ToyReplay(cfg))
    assert result.env_steps >= 400 and result.updates > 40
    assert ToyReplay.seen_mu and 0.0 < min(ToyReplay.seen_mu) <= 1.0  # real probabilities
    evals = [r["env_steps"] for r in read_metrics(tmp_path / "replay") if r["kind"] == "eval"]
    # due at each multiple of eval_every; taken at the first step reaching it (2 actors)
    assert 200 <= evals[0] < 202 and evals[-1] == result.env_steps

    # on-policy: rollouts of whole segments, K epochs over minibatches, extras carried
    cfg = ReplayAgentConfig(**SMALL, total_env_steps=320, eval_every=0,
                            run_dir=tmp_path / "onpolicy")  # fmt: skip
    ToyOnPolicy.rollouts, ToyOnPolicy.deviations = [], []
    result = train(ToyOnPolicy(cfg))
    updates_at_start = [u for u, _ in ToyOnPolicy.rollouts]
    first = ToyOnPolicy.rollouts[0][1]
    assert {"mu", "log_prob", "value"} <= set(first.extras)
    assert first.extras["log_prob"].shape == first.action.shape
    per_rollout = np.diff(updates_at_start)
    assert len(per_rollout) and (per_rollout >= 2).all()  # 2 epochs of >= 1 minibatch each
    rows = [r for r in read_metrics(tmp_path / "onpolicy") if r["kind"] == "train"]
    # the first minibatch learns from the very policy that acted: pi/mu is 1 on every step
    assert rows and ToyOnPolicy.deviations[0] < 1e-4 and max(ToyOnPolicy.deviations) > 1e-4
    assert result.env_steps >= 320

    # offline: updates on the clock, no env step, evaluation every 30 updates, final eval
    @dataclasses.dataclass
    class Cfg(DemoConfig, ReplayAgentConfig):
        """Demos and the replay groups."""

    ToyOffline.config_cls = Cfg
    cfg = Cfg(**SMALL, demos=(cartpole_demos,), run_dir=tmp_path / "offline")
    result = train(ToyOffline(cfg))
    assert result.env_steps == 0 and result.updates == 60
    rows = read_metrics(tmp_path / "offline")
    losses = [r["loss"] for r in rows if r["kind"] == "train"]
    assert len(losses) == 3 and losses[-1] < losses[0]  # it learned the demo actions
    assert [r["updates"] for r in rows if r["kind"] == "eval"] == [30, 60]


def test_extras_round_trip_through_sequences_and_replay(tmp_path):
    writer = SequenceWriter(length=4, period=2)
    writer.begin({"obs": np.array([0.0])}, np.zeros(2), np.zeros(2))
    parts = []
    for t in range(5):
        extras = {"mu": np.float32(t / 10), "values": np.array([t, -t], np.float32)}
        parts.append(writer.step(t % 2, 1.0, t == 4, {"obs": np.array([t + 1.0])}, np.zeros(2),
                                 np.zeros(2), extras))  # fmt: skip
    parts.append(writer.end())
    from agents.core.sequences import concat_batches

    seqs = concat_batches([p for p in parts if p is not None])
    starts = seqs.obs["obs"][:, 0, 0].astype(int)
    for i, s in enumerate(starts):
        for j in range(4):
            if seqs.mask[i, j]:
                assert seqs.extras["mu"][i, j] == pytest.approx((s + j) / 10)
                assert seqs.extras["values"][i, j].tolist() == [s + j, -(s + j)]
            else:  # padding and the bootstrap position carry zeros
                assert seqs.extras["mu"][i, j] == 0 and not seqs.extras["values"][i, j].any()
    with pytest.raises(ValueError, match="extras"):
        w = SequenceWriter(4, 2)
        w.begin({"obs": np.array([0.0])}, np.zeros(2), np.zeros(2))
        w.step(0, 0.0, False, {"obs": np.array([1.0])}, np.zeros(2), np.zeros(2), {"mu": 1.0})
        w.step(0, 0.0, False, {"obs": np.array([2.0])}, np.zeros(2), np.zeros(2), {})
    replay = PrioritizedSequenceReplay(16, seed=0)
    replay.add(seqs)
    sample = replay.sample(8)
    batch = to_torch(uniform_sample(sample.batch, sample.index), torch.device("cpu"))
    np.testing.assert_array_equal(batch.extras["mu"].numpy().T, seqs.extras["mu"][sample.index])
    assert batch.extras["values"].shape == (4, 8, 2)  # time-major like every field
    again = PrioritizedSequenceReplay(16, seed=0)
    again.load_state_arrays(replay.state_arrays(), "test")
    np.testing.assert_array_equal(again.sample(4).batch.extras["values"].shape, (4, 4, 2))


def _learner(rule, **cfg_fields):
    net = RecurrentQNetwork({"obs": Leaf("vector", (4,))}, 2, 8, 8, False)
    cfg = ReplayAgentConfig(burn_in=0, learning_rate=0.1, **cfg_fields)

    def loss(learner, batch):
        q = unroll(learner.network, batch, 0).q
        return LossOutput((q**2).mean(), metrics={})

    return Learner({"main": net}, torch.device("cpu"), loss, {"main": rule}, optim=Optim.of(cfg))


def _batch():
    from tests.agents_lfd.helpers import fake_sequences

    return uniform_sample(fake_sequences(3, 5, num_actions=2))


def test_polyak_target_moves_by_tau_and_hard_copy_every_k():
    learner = _learner(Polyak(0.25))
    before = [p.clone() for p in learner.target.parameters()]
    learner.update(_batch())
    for t0, t1, o in zip(before, learner.target.parameters(), learner.network.parameters()):
        torch.testing.assert_close(t1, 0.75 * t0 + 0.25 * o.detach())
    assert any(not torch.equal(a, b) for a, b in zip(before, learner.target.parameters()))
    hard = _learner(HardCopy(2))
    start = [p.clone() for p in hard.target.parameters()]
    hard.update(_batch())
    assert all(torch.equal(a, b) for a, b in zip(start, hard.target.parameters()))
    hard.update(_batch())
    for t, o in zip(hard.target.parameters(), hard.network.parameters()):
        torch.testing.assert_close(t, o.detach())
    with pytest.raises(ValueError, match="tau"):
        Polyak(0.0)


def test_adam_beta1_reaches_the_optimiser_and_zero_steps_on_the_current_gradient():
    learner = _learner(Polyak(0.25), adam_beta1=0.0, adam_eps=1e-8, max_grad_norm=0.0)
    assert learner.optimizer.param_groups[0]["betas"] == (0.0, 0.999)
    learner.update(_batch())
    before = [p.detach().clone() for p in learner.params]
    learner.optimizer.zero_grad()
    loss = learner.loss_fn(learner, to_torch(_batch(), torch.device("cpu"))).loss
    loss.backward()
    grads = [p.grad.clone() for p in learner.params]
    sq = [learner.optimizer.state[p]["exp_avg_sq"].clone() for p in learner.params]
    learner.optimizer.step()
    # beta1 = 0: the step is lr * g / (sqrt(v / (1 - 0.999^2)) + eps), the current gradient g
    for p, p0, g, v0 in zip(learner.params, before, grads, sq):
        v = 0.999 * v0 + 0.001 * g * g
        step = 0.1 * g / ((v / (1 - 0.999**2)).sqrt() + 1e-8)
        torch.testing.assert_close(p.detach(), p0 - step, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match=r"--adam-beta1: expected in \[0, 1\), got 1.0"):
        ReplayAgentConfig(adam_beta1=1.0).validate()


def _config_for(entry, demos):
    names = {f for f in entry.config_cls.__dataclass_fields__}
    extra = {"demos": (demos,)} if "demos" in names else {}
    return entry.config_cls(env="CartPole-v1", hidden=8, lstm=8, **extra)


@pytest.mark.parametrize("algo", registry.algorithm_names())
def test_restore_rebuilds_each_registered_agent(tmp_path, algo, cartpole_demos):
    from agents.core.agent import EnvInfo

    entry = registry.get_algorithm(algo)
    agent = entry.agent_cls(_config_for(entry, cartpole_demos))
    env = make_env("CartPole-v1")
    specs = agent.network_specs(
        EnvInfo("CartPole-v1", env, make_preprocessor(env.observation_space))
    )
    nets = {k: RecurrentNetwork(s) for k, s in specs.items()}
    path = save_checkpoint(tmp_path / "c.pt", {
        "algo": algo, "config": config_to_dict(agent.cfg), "counters": {"env_steps": 7},
        "network_specs": {k: s.to_json() for k, s in specs.items()},
        "networks": {k: n.state_dict() for k, n in nets.items()},
    })  # fmt: skip
    restored = restore_agent(path)
    assert restored.algo == algo and restored.env_id == "CartPole-v1"
    for k, v in nets["main"].state_dict().items():
        torch.testing.assert_close(restored.controller._policy.network.state_dict()[k], v)
    obs, info = env.reset(seed=0)
    restored.controller.reset(env, obs, info)
    assert restored.controller.act(env, obs) in (0, 1)


def test_previous_format_checkpoints_still_load(tmp_path):
    net = RecurrentQNetwork({"obs": Leaf("vector", (4,))}, 2, 8, 8, True)
    old_keys = {k.replace("heads.q.", ""): v for k, v in net.state_dict().items()}
    cfg = config_to_dict(ReplayAgentConfig(env="CartPole-v1", hidden=8, lstm=8))
    old = {"algo": "r2d2", "config": cfg, "network": old_keys, "target": old_keys,
           "obs_spec": {"obs": {"kind": "vector", "shape": [4], "n": 0}}, "num_actions": 2,
           "counters": {"env_steps": 5, "updates": 1, "episodes": 0}}  # fmt: skip
    save_checkpoint(tmp_path / "old.pt", old)
    restored = restore_agent(tmp_path / "old.pt")
    x = {"obs": torch.randn(3, 1, 4)}
    a, r = torch.zeros(3, 1, dtype=torch.long), torch.zeros(3, 1)
    s = net.initial_state(1)
    torch.testing.assert_close(restored.controller._policy.network(x, a, r, s).q, net(x, a, r, s).q)
    broken = dict(old)
    del broken["network"]
    save_checkpoint(tmp_path / "broken.pt", broken)
    with pytest.raises(CheckpointError, match=r"broken\.pt.*expected network_specs"):
        restore_agent(tmp_path / "broken.pt")
    unknown = {**old, "algo": "nope"}
    save_checkpoint(tmp_path / "unknown.pt", unknown)
    with pytest.raises(CheckpointError, match=r"unknown.pt: algo: expected one of"):
        restore_agent(tmp_path / "unknown.pt")


def test_taken_makes_the_executed_action_the_next_input():
    torch.manual_seed(0)
    net = RecurrentQNetwork({"obs": Leaf("vector", (4,))}, 3, 8, 8, True)
    pre = Preprocessor({"obs": Leaf("vector", (4,))}, is_dict=False)

    def controller():
        policy = BatchPolicy.copy_of(net, EpsilonGreedy(np.zeros(1)), 1, torch.device("cpu"),
                                     np.random.default_rng(0))  # fmt: skip
        return AgentController(policy, pre)

    env = make_env("CartPole-v1")
    obs0 = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
    obs1 = np.array([0.5, -0.2, 0.0, 0.1], np.float32)
    took = controller()
    took.reset(env, obs0, {})
    chosen = took.act(env, obs0)
    person = (chosen + 1) % 3
    took.taken(person)
    took.observe_reward(1.0)
    took.act(env, obs1)
    # the same steps by hand, feeding the person's action
    ref = controller()._policy
    ref.step_network(pre(obs0[None]))
    ref.observe(np.array([person]), np.array([1.0]))
    ref.step_network(pre(obs1[None]))
    torch.testing.assert_close(took._policy.state.h, ref.state.h)
    # ... which differs from following the agent's own action
    own = controller()
    own.reset(env, obs0, {})
    own.act(env, obs0)
    own.observe_reward(1.0)
    own.act(env, obs1)
    assert not torch.allclose(own._policy.state.h, took._policy.state.h)
    with pytest.raises(RuntimeError, match="taken"):
        fresh = controller()
        fresh.reset(env, obs0, {})
        fresh.taken(0)


def test_demo_sequences_carry_the_agents_demo_extras(cartpole_demos):
    from agents.core.demos import demo_sequences, load_demos

    env = make_env("CartPole-v1")
    demos = load_demos([cartpole_demos], "CartPole-v1", env)
    net = RecurrentQNetwork(make_preprocessor(env.observation_space).spec, 2, 8, 8, True)

    def certain(actions):  # Reactor's: the recorded action had probability 1
        return {"mu": np.ones(len(actions), np.float32), "action_copy": actions.copy()}

    seqs = demo_sequences(demos, make_preprocessor(env.observation_space), net, 9, 8,
                          EndBehavior.ZERO_PAD, torch.device("cpu"), certain)  # fmt: skip
    assert (seqs.extras["mu"][seqs.mask] == 1).all() and (seqs.extras["mu"][~seqs.mask] == 0).all()
    np.testing.assert_array_equal(seqs.extras["action_copy"][seqs.mask], seqs.action[seqs.mask])
