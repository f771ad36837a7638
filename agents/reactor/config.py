"""The Reactor-specific config fields (the learning math); the rest comes from the core.

Draft: the agent's ``ReactorConfig`` will be the core's config plus these fields
(``class ReactorConfig(ReactorLossConfig, <core config>)``; :meth:`ReactorLossConfig.validate`
calls the next ``validate`` in the MRO first).

The source document's command line (002, REACTOR-torch ``main.py``) and the DemoStudio flag
each option becomes (``core``: a shared field of the core's config; ``reactor``: below)::

    --env-name ENV               --env                          core
    --exp-name NAME              --run-dir                      core (runs/<algo>-<env>-s<seed>)
    --num-workers N              --num-actors, and the core's   core (actors; in-process
                                 actor-pool flag (issue 11)          or other processes)
    --t-max T                    --total-env-steps              core
    --worker-steps K             --trace                        core (steps learned per
                                                                replayed sequence; sequences
                                                                are burn-in + trace + 1)
    --batch-size B               --batch-size                   core
    --replay-ratio R             --env-steps-per-update         core replay ratio; the seed's
                                                                1 + Poisson(R) updates per K
                                                                steps of each of N workers is
                                                                about K / (1 + R) env steps
                                                                per update
    --buffer-len L               --replay-capacity              core (in sequences)
    --start-train-at S           --min-replay                   core (in sequences: S / period)
    --discount G                 --discount                     core
    --c C                        --trace-clip                   reactor (and --tis-clip for
                                                                the TIS policy gradient)
    --trust-region               --trust-region                 reactor
    --trust-region-threshold D   --trust-region-delta           reactor
    --tau TAU                    --average-tau                  reactor (the core's Polyak
                                                                target set at rate 1 - TAU)
    --lr LR                      --learning-rate                core
    --reward-clip                --reward-clip                  reactor
    --entropy-weight W           --entropy-weight               reactor
    --max-grad-norm M            --max-grad-norm                core
    --debug                      --num-actors 1 --no-tensorboard  core
    --no-lock, --no-lock-update  (none: one learner applies every update; there is no
                                 shared model that workers write to, so nothing to lock)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass
class ReactorLossConfig:
    """Reactor: Retrace critic (distributional or expected), beta-LOO or TIS actor."""

    # --- critic: Retrace -------------------------------------------------------------------
    retrace_lambda: float = 1.0
    """lambda of the Retrace traces c = lambda * min(trace_clip, pi/mu)."""
    trace_clip: float = 1.0
    """Truncation of the importance ratio in the traces (the seed's --c; 1 is Retrace)."""
    distributional: bool = True
    """Distributional Retrace critic (C51 atoms, KL loss); off: expected-value Retrace."""
    num_atoms: int = 51
    """Atoms of the return distribution."""
    v_min: float = -100.0
    """Lowest atom (smallest representable return)."""
    v_max: float = 100.0
    """Highest atom (largest representable return)."""
    critic_weight: float = 1.0
    """Weight of the critic loss against the policy loss."""

    # --- actor: policy gradient ------------------------------------------------------------
    policy_gradient: Literal["beta_loo", "tis"] = "beta_loo"
    """beta-leave-one-out (Reactor) or truncated importance sampling with bias correction (ACER)."""
    beta_clip: float = 1.0
    """c of beta = min(c, 1/mu(A)), >= 1: 1 gives beta = 1 (the paper's runs); large -> 1/mu."""
    tis_clip: float = 10.0
    """c of ACER's truncated ratio min(c, pi/mu) and its bias correction [pi - c mu]_+."""
    entropy_weight: float = 1e-4
    """Weight of the entropy bonus in the policy loss."""
    trust_region: bool = False
    """ACER's efficient trust region against the Polyak-averaged policy."""
    trust_region_delta: float = 1.0
    """delta of the trust region: the linearised KL(pi_avg || pi) per step is at most this."""
    average_tau: float = 0.99
    """Average policy update: avg = tau * avg + (1 - tau) * policy after every learner update."""

    # --- acting and rewards ----------------------------------------------------------------
    behaviour_epsilon: float = 0.01
    """Acting policy mu = (1 - eps) * pi + eps / num_actions (mixed with uniform)."""
    reward_clip: bool = False
    """Clip rewards to [-1, 1] for learning (episode returns are reported unclipped)."""

    def validate(self) -> None:
        """Raise ValueError naming the flag for values that cannot work."""
        parent = getattr(super(), "validate", None)
        if parent is not None:
            parent()
        checks = [
            ("retrace_lambda", 0.0 <= self.retrace_lambda <= 1.0, "in [0, 1]"),
            ("trace_clip", self.trace_clip > 0.0, "> 0"),
            ("num_atoms", self.num_atoms >= 2, ">= 2"),
            ("v_max", self.v_max > self.v_min, f"> --v-min ({self.v_min})"),
            ("critic_weight", self.critic_weight >= 0.0, ">= 0"),
            ("beta_clip", self.beta_clip >= 1.0, ">= 1"),
            ("tis_clip", self.tis_clip > 0.0, "> 0"),
            ("entropy_weight", self.entropy_weight >= 0.0, ">= 0"),
            ("trust_region_delta", self.trust_region_delta > 0.0, "> 0"),
            ("average_tau", 0.0 <= self.average_tau <= 1.0, "in [0, 1]"),
            ("behaviour_epsilon", 0.0 <= self.behaviour_epsilon <= 1.0, "in [0, 1]"),
        ]
        for name, ok, expected in checks:
            if not ok:
                raise ValueError(
                    f"--{name.replace('_', '-')}: expected {expected}, got {getattr(self, name)}"
                )


__all__ = ["ReactorLossConfig"]
