"""Adam as one fused kernel call per update, without ``torch.optim``'s wrappers.

``torch.optim.Adam(fused=True)`` runs the same kernel, but its ``step`` and ``zero_grad``
import ``torch._dynamo`` on first use: 1-3 s of a run's start (more on a loaded machine)
spent on a compiler the trainer never calls, and several Python layers per step around one
kernel. :class:`FusedAdam` calls ``torch._fused_adam_`` itself with the arguments
``torch.optim.Adam(fused=True)`` gives it, so an update computes exactly what that optimizer
computes, and its :meth:`~FusedAdam.state_dict` has that optimizer's layout: checkpoints
load in either.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import torch

GROUP_DEFAULTS: dict[str, Any] = {
    "weight_decay": 0,
    "amsgrad": False,
    "maximize": False,
    "foreach": None,
    "capturable": False,
    "differentiable": False,
    "fused": True,
    "decoupled_weight_decay": False,
}
"""The settings ``torch.optim.Adam`` stores in each group beside ``lr``, ``betas`` and
``eps``: the ones this optimizer runs with, kept so its state dict reads as that one's."""
MOMENTS = ("exp_avg", "exp_avg_sq")


class OptimizerStateError(ValueError):
    """A saved optimizer state that does not fit the parameters; ``field`` names the part."""

    def __init__(self, field: str, message: str):
        self.field = field
        super().__init__(f"optimizer.{field}: {message}")


class FusedAdam:
    """Adam (no weight decay, no amsgrad) over parameter groups; ``param_groups`` and
    ``state`` are read and written like ``torch.optim.Adam``'s (a schedule sets a group's
    ``lr``)."""

    def __init__(
        self,
        groups: Iterable[Mapping[str, Any]],
        lr: float,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ):
        self.param_groups: list[dict[str, Any]] = []
        for g in groups:
            params = list(g["params"])
            settings = {"lr": lr, "betas": tuple(betas), "eps": eps, **GROUP_DEFAULTS, **g}
            self.param_groups.append({**settings, "params": params})
        self.state: dict[torch.Tensor, dict[str, torch.Tensor]] = {}

    def zero_grad(self, set_to_none: bool = True) -> None:
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()

    @torch.no_grad()
    def step(self) -> None:
        for group in self.param_groups:
            by_kind: dict[tuple[torch.device, torch.dtype], list[list[torch.Tensor]]] = {}
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state.get(p)
                if state is None:
                    state = self.state[p] = self._fresh(p)
                lists = by_kind.setdefault((p.device, p.dtype), [[], [], [], [], []])
                for i, t in enumerate(
                    (p, p.grad, state["exp_avg"], state["exp_avg_sq"], state["step"])
                ):
                    lists[i].append(t)
            beta1, beta2 = group["betas"]
            for params, grads, avgs, sqs, steps in by_kind.values():
                torch._foreach_add_(steps, 1)
                torch._fused_adam_(
                    params, grads, avgs, sqs, [], steps, amsgrad=False, lr=group["lr"],
                    beta1=beta1, beta2=beta2, weight_decay=group["weight_decay"],
                    eps=group["eps"], maximize=False, grad_scale=None, found_inf=None,
                )  # fmt: skip

    @staticmethod
    def _fresh(p: torch.Tensor) -> dict[str, torch.Tensor]:
        if p.dtype not in (torch.float16, torch.bfloat16, torch.float32, torch.float64):
            raise TypeError(f"FusedAdam: expected floating-point parameters, got {p.dtype}")
        return {
            "step": torch.zeros((), dtype=torch.float32, device=p.device),
            "exp_avg": torch.zeros_like(p, memory_format=torch.preserve_format),
            "exp_avg_sq": torch.zeros_like(p, memory_format=torch.preserve_format),
        }

    def state_dict(self) -> dict[str, Any]:
        """``torch.optim.Adam``'s layout: each parameter by its index over the groups."""
        index: dict[torch.Tensor, int] = {}
        groups = []
        for group in self.param_groups:
            ids = [index.setdefault(p, len(index)) for p in group["params"]]
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[p]: dict(s) for p, s in self.state.items() if p in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, saved: Mapping[str, Any]) -> None:
        """A state saved by this optimizer or by ``torch.optim.Adam`` over the same
        parameters; one that does not fit raises :class:`OptimizerStateError` and changes
        nothing."""
        groups = saved.get("param_groups") if isinstance(saved, Mapping) else None
        if not isinstance(groups, list) or len(groups) != len(self.param_groups):
            raise OptimizerStateError(
                "param_groups", f"expected {len(self.param_groups)} groups, got "
                f"{len(groups) if isinstance(groups, list) else type(groups).__name__}",
            )  # fmt: skip
        by_id: dict[Any, torch.Tensor] = {}
        for i, (mine, theirs) in enumerate(zip(self.param_groups, groups, strict=True)):
            ids = theirs.get("params") if isinstance(theirs, Mapping) else None
            if not isinstance(ids, list) or len(ids) != len(mine["params"]):
                raise OptimizerStateError(
                    f"param_groups[{i}].params",
                    f"expected {len(mine['params'])} parameters, got "
                    f"{len(ids) if isinstance(ids, list) else type(ids).__name__}",
                )  # fmt: skip
            by_id.update(zip(ids, mine["params"], strict=True))
        saved_state = saved.get("state", {})
        if not isinstance(saved_state, Mapping):
            raise OptimizerStateError("state", f"expected a mapping, got {type(saved_state)}")
        state = {}
        for key, entry in saved_state.items():
            p = by_id.get(key)
            if p is None or not isinstance(entry, Mapping):
                raise OptimizerStateError(f"state[{key}]", "expected a parameter's moments")
            state[p] = self._loaded(p, key, entry)
        for mine, theirs in zip(self.param_groups, groups, strict=True):
            for k in ("lr", "betas", "eps"):
                if k in theirs:
                    mine[k] = tuple(theirs[k]) if k == "betas" else float(theirs[k])
        self.state = state

    @staticmethod
    def _loaded(p: torch.Tensor, key: Any, entry: Mapping[str, Any]) -> dict[str, torch.Tensor]:
        out = {}
        for name in MOMENTS:
            t = entry.get(name)
            if not isinstance(t, torch.Tensor) or t.shape != p.shape:
                got = tuple(t.shape) if isinstance(t, torch.Tensor) else type(t).__name__
                want = f"expected a tensor of shape {tuple(p.shape)}, got {got}"
                raise OptimizerStateError(f"state[{key}].{name}", want)
            out[name] = t.to(dtype=p.dtype, device=p.device)
        step = entry.get("step")
        if not isinstance(step, torch.Tensor | int | float):
            raise OptimizerStateError(f"state[{key}].step", "expected a number")
        out["step"] = torch.as_tensor(step, dtype=torch.float32).to(p.device).reshape(())
        return out


__all__ = ["FusedAdam", "OptimizerStateError"]
