"""Actors in other processes: the :class:`~agents.core.actor.ActorPool` seam on Ray.

``--actor-procs N`` starts N Ray actors (``ray.remote``), each a :class:`ActorProcess`
running a :class:`~agents.core.actor.VectorActor` of ``--num-actors`` envs on its own CPU
copy of the acting network. The learner and the replay stay in the driver (this process);
nothing here knows which algorithm runs::

    driver                                   actor process k (one request in flight)
    step(): ray.wait(in flight, 1) ------->  collect(steps, weights?, version)
            <- ActorStep (finished sequences)   steps its envs `actor_chunk_steps` times
            resubmit k at once (pipelining)     acting with the newest weights it got
    update_weights(w, v): one ray.put per sync (every --weight-sync-every updates); the
            ref rides along with each actor's next request

The replay ratio stays the learner's: each ``step()`` hands the schedule one chunk, the
schedule learns what that chunk makes due before asking again, and an actor is given its
next request only when its last chunk was taken. So the actors wait when the learner is
behind (at most one chunk each ahead), and the learner waits in ``ray.wait`` when the actors
are. An actor process that dies (killed, out of memory) is replaced by a fresh one with the
newest weights; its unfinished chunk is lost and was never counted.

Ray's token authentication stays on (``RAY_AUTH_MODE=token``) unless the user turns it off
with ``--no-ray-auth`` or by setting ``RAY_AUTH_MODE=disabled`` themselves; a local Ray
listens on 127.0.0.1 only (:mod:`agents.core.ray_access`). SIGTERM stops the run as Ctrl-C
does (Ray's own handler, which ``ray.init`` sets, would exit before the run saved).
"""

from __future__ import annotations

import contextlib
import copy
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import numpy as np
import torch

from agents.core.actor import ActorSpec, ActorStep, FinishedEpisode, make_vector_actor
from agents.core.config import ActorProcsConfig
from agents.core.ray_access import auth_mode, check_cluster, ensure_local_token, local_only
from agents.core.sequences import SequenceBatch, concat_batches
from agents.core.stopping import keep_stop_handlers

STARTUP_TIMEOUT_S = 120.0
"""How long the actor processes may take to start before the run gives up."""


class ActorProcess:
    """One actor process: a VectorActor on CPU, stepped a chunk per request."""

    def __init__(self, spec: ActorSpec, torch_threads: int = 1):
        torch.set_num_threads(max(1, torch_threads))
        self.actor = make_vector_actor(spec, torch.device("cpu"))

    def pid(self) -> int:
        return os.getpid()

    def collect(
        self, steps: int, weights: Mapping[str, np.ndarray] | None, version: int
    ) -> tuple[ActorStep, int]:
        """Load ``weights`` (when given), step every env ``steps`` times; the sequences
        completed, env steps, finished episodes, and the weights version acted with."""
        if weights is not None:  # numpy arrays (read-only views of Ray's store): copied
            self.actor.update_weights({k: torch.tensor(v) for k, v in weights.items()}, version)
        parts: list[SequenceBatch] = []
        finished: list[FinishedEpisode] = []
        env_steps = 0
        for _ in range(steps):
            step = self.actor.step()
            env_steps += step.env_steps
            finished.extend(step.finished)
            if step.sequences is not None:
                parts.append(step.sequences)
        chunk = ActorStep(concat_batches(parts) if parts else None, env_steps, finished)
        return chunk, self.actor.policy.version


def _import_ray():
    try:
        import ray
    except ImportError:
        raise ValueError(
            "--actor-procs: expected the ray package (pip install 'demostudio[ray]'), "
            "got none installed"
        ) from None
    return ray


def _code_runtime_env() -> dict[str, Any]:
    """Ray's runtime environment for a cluster joined with ``--ray-address``: this checkout's
    ``agents`` and ``demostudio`` packages, uploaded once and importable on every node (the
    nodes need the same third-party packages installed: torch, gymnasium, ...)."""
    import agents
    import demostudio

    return {"py_modules": [os.path.dirname(m.__file__) for m in (agents, demostudio)]}


def _writer(enabled: bool) -> Callable[[str], None]:
    if not enabled:
        return lambda text: None
    from tqdm import tqdm

    return tqdm.write


@contextlib.contextmanager
def _startup_display(text: str, enabled: bool) -> Iterator[None]:
    """A line with a running clock while Ray starts (it takes seconds), then how long."""
    if not enabled:
        yield
        return
    from tqdm import tqdm

    if not sys.stderr.isatty():  # a log file: one line, no ticker of cursor codes
        print(f"{text} ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        yield
        tqdm.write(f"{text}: ready in {time.perf_counter() - t0:.1f} s")
        return
    bar = tqdm(total=None, desc=text, bar_format="{desc} {elapsed}", leave=False)
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(0.25):
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        bar.close()
    tqdm.write(f"{text}: ready in {time.perf_counter() - t0:.1f} s")


class RayActorPool:
    """``len(specs)`` actor processes on Ray (the pool of the module docstring)."""

    def __init__(
        self,
        specs: list[ActorSpec],
        cfg: ActorProcsConfig,
        torch_threads: int,
        progress: bool,
        say: Callable[[str], None] | None = None,
    ):
        """``cfg`` gives ``ray_address``, ``ray_auth``, ``actor_chunk_steps`` and
        ``weight_sync_every``; ``torch_threads`` is each actor process's torch thread count,
        ``progress`` whether startup is shown on a progress line."""
        auth = self._auth = auth_mode(bool(cfg.ray_auth))
        local_only(not cfg.ray_address)  # before import: Ray reads it then
        ray = self._ray = _import_ray()
        self.specs = list(specs)
        self.num_envs = sum(s.num_envs for s in self.specs)
        self.chunk_steps = int(cfg.actor_chunk_steps)
        self.sync_every = int(cfg.weight_sync_every)
        self.torch_threads = int(torch_threads)
        self.restarts = 0
        self._say = say or _writer(bool(progress))
        self._closed = False
        self._weights: Any = None  # ObjectRef of the newest weights sent
        self._version = -1  # the version of the weights sent last
        self._latest = -1  # the newest version the learner offered
        self._given = [-1] * len(self.specs)  # the version each actor last got
        self._lag: list[int] = []
        self._inflight: dict[Any, int] = {}
        where = cfg.ray_address or "local"
        text = f"starting Ray ({where}, {len(self.specs)} actor processes, auth {auth})"
        self._started_ray = False
        with _startup_display(text, bool(progress)):
            try:
                if not ray.is_initialized():
                    self._started_ray = True  # shut down on close, even if init is interrupted
                    self._init_ray(cfg.ray_address)
                self._remote = ray.remote(num_cpus=1, max_restarts=0)(ActorProcess)
                self.actors = [self._spawn(k) for k in range(len(self.specs))]
                self.pids = self._wait_started(list(range(len(self.specs))))
            except BaseException:
                self.close()
                raise
        for k in range(len(self.actors)):
            self._submit(k)

    def _init_ray(self, address: str | None) -> None:
        ray = self._ray
        kwargs: dict[str, Any] = dict(
            include_dashboard=False, log_to_driver=False, logging_level="ERROR"
        )
        if not address:
            # Ray starts its workers at niceness 15, below any other program on the machine;
            # here they are the actors the learner waits for (a user's setting wins)
            os.environ.setdefault("RAY_worker_niceness", "0")
            if self._auth == "token":
                ensure_local_token()
            with keep_stop_handlers():
                ray.init(address="local", num_cpus=max(os.cpu_count() or 1, len(self.specs)),
                         **kwargs)  # fmt: skip
            return
        check_cluster(address, self._auth)
        try:
            with keep_stop_handlers():
                ray.init(address=address, runtime_env=_code_runtime_env(), **kwargs)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ValueError(
                f"--ray-address: expected a running Ray cluster at {address}, "
                f"got {type(exc).__name__}: {exc}"
            ) from None

    # --- processes --------------------------------------------------------------------------
    def _spawn(self, k: int, restart: int = 0):
        spec = self.specs[k]
        spec = spec._replace(
            network=copy.deepcopy(spec.network).cpu(),
            env_seed=spec.env_seed + 100_003 * restart,
            policy_seed=spec.policy_seed + 100_003 * restart,
        )
        return self._remote.remote(spec, self.torch_threads)

    def _wait_started(self, which: list[int]) -> list[int]:
        ray = self._ray
        refs = [self.actors[k].pid.remote() for k in which]
        try:
            return list(ray.get(refs, timeout=STARTUP_TIMEOUT_S))
        except ray.exceptions.GetTimeoutError:
            raise ValueError(
                f"--actor-procs: expected {len(which)} actor process(es) to start within "
                f"{STARTUP_TIMEOUT_S:.0f} s, got fewer (does the Ray cluster have a free CPU "
                "per actor process?)"
            ) from None

    def _replace(self, k: int, reason: str) -> None:
        self.restarts += 1
        with contextlib.suppress(Exception):
            self._ray.kill(self.actors[k])
        self.actors[k] = self._spawn(k, self.restarts)
        self._given[k] = -1
        self.pids[k] = self._wait_started([k])[0]
        self._say(f"actor process {k} died ({reason}); replaced (pid {self.pids[k]})")

    def _submit(self, k: int) -> None:
        send = self._weights is not None and self._given[k] < self._version
        weights = self._weights if send else None
        ref = self.actors[k].collect.remote(self.chunk_steps, weights, self._version)
        if send:
            self._given[k] = self._version
        self._inflight[ref] = k

    # --- the ActorPool seam -----------------------------------------------------------------
    def step(self) -> ActorStep:
        """The next chunk any actor process finished (waiting for one when none has)."""
        ray = self._ray
        while True:
            ready, _ = ray.wait(list(self._inflight), num_returns=1)
            k = self._inflight.pop(ready[0])
            try:
                chunk, version = ray.get(ready[0])
            except ray.exceptions.RayActorError as exc:
                self._replace(k, type(exc).__name__)
                self._submit(k)
                continue
            self._submit(k)
            if version >= 0:
                self._lag.append(self._latest - version)
            return chunk

    def update_weights(self, weights: Mapping[str, torch.Tensor], version: int) -> None:
        """Send ``weights`` (one ray.put) when ``weight_sync_every`` updates have passed
        since the last send; each actor gets them with its next request."""
        self._latest = version
        if self._weights is not None and version - self._version < self.sync_every:
            return
        # numpy, not torch tensors: Ray stores arrays as they are (a torch tensor is pickled,
        # about 2.5 ms for R2D2's small network on each side, every sync)
        cpu = {k: v.detach().to("cpu", copy=True).numpy() for k, v in weights.items()}
        self._weights = self._ray.put(cpu)
        self._version = version

    def metrics(self) -> dict[str, float]:
        out = {"actor_restarts": float(self.restarts)}
        if self._lag:
            out["policy_lag"] = sum(self._lag) / len(self._lag)
            self._lag.clear()
        return out

    def close(self) -> None:
        """Stop the actor processes, and Ray when this pool started it."""
        if self._closed:
            return
        self._closed = True
        ray = self._ray
        for actor in getattr(self, "actors", []):
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self._inflight.clear()
        if self._started_ray:
            ray.shutdown()


__all__ = ["STARTUP_TIMEOUT_S", "ActorProcess", "RayActorPool"]
