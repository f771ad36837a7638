"""Who can reach the Ray a run uses, and with what (:mod:`agents.core.ray_pool` calls these
before ``ray.init``).

* A local ``--actor-procs`` run starts a Ray that listens on 127.0.0.1 only: Ray's
  single-machine mode, the one it uses on macOS and Windows (on Linux its GCS, raylets and
  workers otherwise listen on every interface, open to anyone on the network).
* Token authentication (``RAY_AUTH_MODE=token``) stays on unless the user turns it off; a
  token DemoStudio writes for a local run is readable by its user only (0600).
* Joining a cluster (``--ray-address``) first asks its GCS whether our token authentication
  matches its own, so that a mismatch is one line saying which side has what (Ray itself
  fails with a traceback, after 20 s, or with actor processes that die as they start).
"""

from __future__ import annotations

import os
import secrets
import socket
import sys
from pathlib import Path

LOCAL_ONLY_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
"""Ray's switch for its single-machine mode ("0": every Ray process binds 127.0.0.1)."""
TOKEN_HELP = "`ray get-auth-token` on the cluster's head prints it"
_USERS_LOCAL_ONLY = os.environ.get(LOCAL_ONLY_ENV)


def auth_mode(auth: bool) -> str:
    """Set ``RAY_AUTH_MODE`` for this process and the Ray processes it starts: token unless
    the user turned it off (``--no-ray-auth``, or ``RAY_AUTH_MODE=disabled`` already set).
    Call before ``import ray`` reads it (Ray caches its config at import)."""
    mode = os.environ.get("RAY_AUTH_MODE", "token") if auth else "disabled"
    _set_auth_mode(mode)
    return mode


def _set_auth_mode(mode: str) -> None:
    os.environ["RAY_AUTH_MODE"] = mode
    raylet = sys.modules.get("ray._raylet")
    if raylet is not None:  # imported before: refresh its cached config, as Ray itself does
        raylet.Config.initialize("")


def local_only(on: bool) -> None:
    """Ray's single-machine mode on (a local run) or as the user had it (a joined cluster,
    whose nodes must reach this driver). Ray reads the switch when imported; when it was
    imported before, its module's flag is set as the variable would have set it."""
    if on:
        os.environ[LOCAL_ONLY_ENV] = "0"
    elif _USERS_LOCAL_ONLY is None:
        os.environ.pop(LOCAL_ONLY_ENV, None)
    else:
        os.environ[LOCAL_ONLY_ENV] = _USERS_LOCAL_ONLY
    constants = sys.modules.get("ray._private.ray_constants")
    if constants is not None:
        value = os.environ.get(LOCAL_ONLY_ENV)
        default = not constants.IS_WINDOWS_OR_OSX
        constants.ENABLE_RAY_CLUSTER = default if value is None else value.lower() in ("1", "true")


def ensure_local_token() -> Path | None:
    """With token authentication and no token yet (``RAY_AUTH_TOKEN``, ``RAY_AUTH_TOKEN_PATH``
    or ``~/.ray/auth_token``), write a new one to ``~/.ray/auth_token``, mode 0600 (Ray's own
    would get the umask's 0644: any user of the machine could read it). The file, or None."""
    from ray._raylet import AuthenticationTokenLoader

    loader = AuthenticationTokenLoader.instance()
    if loader.has_token(ignore_auth_mode=True) or os.environ.get("RAY_AUTH_TOKEN_PATH"):
        return None
    path = Path.home() / ".ray" / "auth_token"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # there but unreadable or empty: Ray's own error says so
        return None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(secrets.token_hex(32))  # Ray's own token format: 256 random bits in hex
    loader.reset_cache()
    return path


def check_cluster(address: str, mode: str) -> None:
    """ValueError (one line: what mismatched and what to do) when nothing answers at
    ``address`` or the cluster's token authentication does not match this run's ``mode``.
    An address that is not ``HOST:PORT`` is left to ``ray.init``."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or "://" in address:
        return
    flag = f"--ray-address {address}"
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=10).close()
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise ValueError(
            f"{flag}: expected a running Ray cluster there, got no answer ({why})"
        ) from None
    from ray._raylet import AuthenticationTokenLoader
    from ray.exceptions import AuthenticationError

    if mode == "token" and not AuthenticationTokenLoader.instance().has_token(
        ignore_auth_mode=True
    ):
        raise ValueError(
            f"{flag}: this run uses token authentication (RAY_AUTH_MODE=token) but has no "
            f"token: set RAY_AUTH_TOKEN to the cluster's token ({TOKEN_HELP}) or write it to "
            "~/.ray/auth_token (chmod 600)"
        )
    try:
        _gcs_answers(address)
    except AuthenticationError:
        if mode == "token":
            raise ValueError(
                f"{flag}: the cluster refused this run's token (RAY_AUTH_TOKEN or "
                f"~/.ray/auth_token): expected the cluster's token ({TOKEN_HELP})"
            ) from None
        raise ValueError(
            f"{flag}: the cluster uses token authentication and this run has it off "
            f"(--no-ray-auth or RAY_AUTH_MODE=disabled): leave both out and give the cluster's "
            f"token in RAY_AUTH_TOKEN ({TOKEN_HELP})"
        ) from None
    except Exception:  # not an answer about authentication: ray.init reports what it finds
        return
    if mode == "token" and _open_to_anyone(address):
        raise ValueError(
            f"{flag}: the cluster runs without token authentication (anyone who reaches it can "
            "run code on it) and this run uses it: restart the cluster with RAY_AUTH_MODE=token "
            "and RAY_AUTH_TOKEN set to this run's token, or pass --no-ray-auth (a trusted "
            "network only)"
        )


def _gcs_answers(address: str) -> None:
    """Connect to the GCS at ``address`` (AuthenticationError when it refuses our token);
    Ray's C++ client logs each refusal on stderr, which the error line says better."""
    from ray._raylet import GcsClient

    sys.stderr.flush()
    saved = os.dup(2)
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 2)
        GcsClient(address=address)
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def _open_to_anyone(address: str) -> bool:
    """Whether the GCS at ``address`` answers a client that sends no token."""
    from ray.exceptions import AuthenticationError

    mode = os.environ["RAY_AUTH_MODE"]
    _set_auth_mode("disabled")
    try:
        _gcs_answers(address)
        return True
    except AuthenticationError:
        return False
    finally:
        _set_auth_mode(mode)


__all__ = ["LOCAL_ONLY_ENV", "auth_mode", "check_cluster", "ensure_local_token", "local_only"]
