"""Making environments from stored ids: registering the plugin packages that provide them, and
the metadata of an env that an episode file records."""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import importlib
import importlib.metadata
import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym

from .attrs import GYM_ID
from .schema import EpisodeError

# Env id prefixes and the package whose import registers them.
_PLUGINS = (
    ("ALE/", "ale_py"),
    ("MiniGrid-", "minigrid"),
    ("BabyAI-", "minigrid"),
)
_VERSIONED_PACKAGES = ("demostudio", "gymnasium", "numpy", "h5py", "ale-py", "minigrid", "box2d")


class UnknownEnvError(ValueError):
    """An env id that Gymnasium cannot make."""


class EnvKwargsError(ValueError):
    """The env's own code refused the keyword arguments it was made with (a name its
    constructor lacks, a value it rejects). ``reason`` says so without naming where the
    kwargs came from (a checkpoint names its file); the message names --env-kwargs, where
    a user gives them."""

    def __init__(self, reason: str):
        super().__init__(f"--env-kwargs: {reason}")
        self.reason = reason


def ensure_registered(env_id: str) -> None:
    """Import the package that registers ``env_id`` (ale-py, minigrid) if it is one of theirs.

    Raises UnknownEnvError naming the id and the package to install when it is still unknown."""
    if env_id in gym.registry:
        return
    for prefix, module in _PLUGINS:
        if env_id.startswith(prefix):
            try:
                mod = importlib.import_module(module)
            except ImportError:
                raise UnknownEnvError(
                    f"expected a registered Gymnasium id, got {env_id!r}: it needs the "
                    f"{module.replace('_', '-')} package (pip install "
                    f"'demostudio[{'atari' if module == 'ale_py' else 'minigrid'}]')"
                ) from None
            if module == "ale_py":
                gym.register_envs(mod)
    if env_id not in gym.registry and ":" not in env_id:
        close = closest_ids(env_id)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise UnknownEnvError(
            f"expected a registered Gymnasium id, got {env_id!r} (not registered; "
            f"{hint}`demostudio envs` lists the known ones)"
        )


def load_plugins() -> None:
    """Import the installed plugin packages (ale-py, minigrid) so their ids are registered."""
    for module in dict.fromkeys(module for _, module in _PLUGINS):
        try:
            mod = importlib.import_module(module)
        except ImportError:
            continue
        if module == "ale_py":
            gym.register_envs(mod)


def registered_ids() -> list[str]:
    """Every registered env id, the installed plugins' included, sorted."""
    load_plugins()
    return sorted(gym.registry)


def closest_ids(env_id: str, n: int = 3) -> list[str]:
    """Up to ``n`` registered ids that look like ``env_id`` (a typo, another case, a missing
    ``ALE/`` prefix), best first."""
    ids = registered_ids()
    by_lower = {i.lower(): i for i in ids}
    matches = difflib.get_close_matches(env_id.lower(), list(by_lower), n=n, cutoff=0.75)
    return [by_lower[m] for m in matches]


def make_env(env_id: str, kwargs: dict[str, Any] | None = None, **extra: Any) -> gym.Env:
    """``gymnasium.make`` after :func:`ensure_registered`; UnknownEnvError for unknown ids."""
    ensure_registered(env_id)
    try:
        return gym.make(env_id, **{**(kwargs or {}), **extra})
    except gym.error.Error as exc:
        raise UnknownEnvError(f"cannot make {env_id!r}: {exc}") from None


def env_failure(kwargs: dict[str, Any], when: str, exc: BaseException) -> str:
    """``kwargs`` the env raised ``exc`` with when it ``when`` ("is made", "resets"), as one
    line (verify's wording for a file's env_kwargs)."""
    text = " ".join(str(exc).split())[:200] or type(exc).__name__
    return (
        f"expected arguments the env runs with, got {json.dumps(kwargs, default=str)[:200]}: "
        f"it fails when it {when} ({type(exc).__name__}: {text})"
    )


def env_kwargs_error(
    path: str | Path, kwargs: dict[str, Any], when: str, exc: BaseException
) -> EpisodeError:
    """The env made from an episode file's id and ``env_kwargs`` raised ``exc`` when it
    ``when``: an EpisodeError naming env_kwargs, the likeliest cause in a file whose actions
    are in the action space."""
    return EpisodeError(path, "env_kwargs", env_failure(kwargs, when, exc))


@contextlib.contextmanager
def refusing_kwargs(kwargs: dict[str, Any]) -> Iterator[None]:
    """Inside, an env made with ``kwargs`` a user chose: the env's own refusal of them
    (gymnasium passes them to its constructor) becomes an EnvKwargsError line instead of the
    env's traceback; without kwargs, or for an unknown id, the error is raised as it is."""
    try:
        yield
    except UnknownEnvError:
        raise
    except Exception as exc:  # the env's code: TypeError for a name, ValueError for a value
        if not kwargs:
            raise
        raise EnvKwargsError(env_failure(kwargs, "is made", exc)) from None


def make_env_with_kwargs(env_id: str, kwargs: dict[str, Any], **extra: Any) -> gym.Env:
    """:func:`make_env` with kwargs a user chose (--env-kwargs, a checkpoint's config),
    refused in one line as :func:`refusing_kwargs` says."""
    with refusing_kwargs(kwargs):
        return make_env(env_id, kwargs, **extra)


def package_versions() -> dict[str, str]:
    out = {}
    for name in _VERSIONED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return out


def action_meanings(env: gym.Env) -> list[str] | None:
    """Names of a discrete env's actions where the env has them (ALE, MiniGrid)."""
    base = env.unwrapped
    getter = getattr(base, "get_action_meanings", None)
    if callable(getter):
        try:
            return [str(m) for m in getter()]
        except Exception:
            return None
    actions = getattr(base, "actions", None)
    if actions is not None and hasattr(actions, "__members__"):
        return [name for name in actions.__members__]
    return None


def env_metadata(env: gym.Env) -> dict[str, Any]:
    """Root attributes describing ``env``: id, make kwargs, spec, frameskip, sticky actions."""
    spec = env.spec
    if spec is not None:  # wrappers put around the made env (an agent's) name code: not kept
        registered = gym.registry.get(spec.id)
        made = registered.additional_wrappers if registered is not None else ()
        spec = dataclasses.replace(spec, additional_wrappers=made)
    kwargs = {k: v for k, v in (spec.kwargs if spec else {}).items() if k != "render_mode"}
    try:
        spec_json = json.loads(spec.to_json()) if spec is not None else None
    except (ValueError, TypeError, AttributeError):
        spec_json = None
    return {
        "env_id": spec.id if spec else type(env.unwrapped).__name__,
        "env_kwargs": kwargs,
        "max_episode_steps": spec.max_episode_steps if spec else None,
        "env_spec": spec_json,
        "frameskip": kwargs.get("frameskip"),
        "sticky_actions": kwargs.get("repeat_action_probability"),
        "action_meanings": action_meanings(env),
        "versions": package_versions(),
    }


def remake_env(attrs: dict[str, Any], render_mode: str | None = "rgb_array") -> gym.Env:
    """The env an episode was recorded in, from its root attributes: the installed registry's
    env for its ``env_id``, made with its ``env_kwargs`` and ``max_episode_steps`` (plain
    data); its ``env_spec`` is never built from (see :func:`spec_differences`)."""
    extra: dict[str, Any] = {"render_mode": render_mode}
    if attrs.get("max_episode_steps") is not None:
        extra["max_episode_steps"] = attrs["max_episode_steps"]
    return make_env(str(attrs["env_id"]), attrs.get("env_kwargs") or {}, **extra)


def episode_env(path: str | Path, attrs: dict[str, Any], render_mode: str | None = None) -> gym.Env:
    """:func:`remake_env` for the episode file at ``path``, every refusal one EpisodeError:
    a stored spec naming other code than the registry's (``env_spec.FIELD``), an id the
    registry lacks (``env_id``), ``env_kwargs`` the env's constructor rejects."""
    check_env_spec(path, attrs)
    try:
        return remake_env(attrs, render_mode=render_mode)
    except UnknownEnvError as exc:
        raise EpisodeError(path, "env_id", str(exc)) from None
    except Exception as exc:  # the env's own code refused the file's env_kwargs
        raise env_kwargs_error(path, attrs.get("env_kwargs") or {}, "is made", exc) from None


def code_name(target: object) -> str | None:
    """An entry point as an EnvSpec's JSON names it: ``"module:attribute"`` (a callable the
    registry holds is named by its module and qualified name); None for none."""
    if target is None or isinstance(target, str):
        return target
    return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', target)}"


def _wrapper_names(wrappers: object) -> object:
    """The entry points of a spec's ``additional_wrappers`` (a list of WrapperSpec objects or
    of their JSON objects); anything else as it is, to be shown as what was found."""
    if not isinstance(wrappers, (list, tuple)):
        return wrappers
    names = []
    for w in wrappers:
        entry = w.get("entry_point") if isinstance(w, Mapping) else getattr(w, "entry_point", w)
        names.append(code_name(entry) if not isinstance(entry, (list, dict)) else entry)
    return names


def _shown(value: object) -> str:
    text = json.dumps(value, default=str)
    return text if len(text) <= 200 else text[:197] + "..."


def spec_differences(env_id: str, spec: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """``(field, reason)`` for each field of a stored env ``spec`` (the JSON object of
    ``EnvSpec.to_json()``, as an episode file or a Minari dataset keeps it) that names code
    other than the installed registry's spec of ``env_id`` does (the fields Gymnasium imports
    and calls: ``entry_point``, ``vector_entry_point``, ``additional_wrappers``), or another
    id. A stored spec is data to compare, never a recipe: every env DemoStudio makes
    for a file comes from the registry by id, so a spec naming other code is refused before
    anything is made, and no field of it is imported or called.

    A field the spec leaves out or sets to null names no code and passes. An id the registry
    lacks has nothing to compare with (and no env is made for it): no differences."""
    if spec is None:
        return []
    if not GYM_ID.check(env_id):  # gymnasium.spec would import the module a "module:Env" names
        return [("id", f"expected {GYM_ID.name}, got {_shown(env_id)}")]
    try:
        ensure_registered(env_id)
        registered = gym.spec(env_id)
    except (UnknownEnvError, gym.error.Error):
        return []
    found: list[tuple[str, str]] = []
    if spec.get("id", env_id) != env_id:
        found.append(("id", f"expected {env_id!r} (the env_id), got {_shown(spec.get('id'))}"))
    why = "DemoStudio makes envs from the installed registry by id, never from code a file names"
    for key in ("entry_point", "vector_entry_point"):
        want, got = code_name(getattr(registered, key)), spec.get(key)
        if got is not None and got != want:
            found.append(
                (key, f"expected the registered {_shown(want)}, got {_shown(got)} ({why})")
            )
    wrappers = _wrapper_names(registered.additional_wrappers)
    got = _wrapper_names(spec.get("additional_wrappers") or [])
    if got != wrappers:
        found.append(
            (
                "additional_wrappers",
                f"expected the registered wrappers {_shown(wrappers)}, got {_shown(got)} ({why})",
            )
        )
    return found


def check_env_spec(path: str | Path, attrs: Mapping[str, Any]) -> None:
    """EpisodeError naming ``env_spec.FIELD`` for the first difference
    :func:`spec_differences` finds between the file's ``env_spec`` and the registry's."""
    for key, reason in spec_differences(str(attrs["env_id"]), attrs.get("env_spec")):
        raise EpisodeError(path, f"env_spec.{key}", reason)
