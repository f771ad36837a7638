"""Ray with ``--actor-procs``: SIGTERM saves the run marked interrupted (Ray's own handler
would exit first and leave a final.pt that looks finished), a local run's Ray listens on
127.0.0.1 only and its token file is the user's alone, and joining a cluster whose token
authentication does not match ours is one line saying what mismatched."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.agents.test_crash_resume import ROOT
from tests.agents.test_ray_pool import _alive, _descendants, ray_head
from tests.agents.test_stop_signals import CLI, _first_row, assert_saved_as_interrupted

pytest.importorskip("ray")

TOKEN = "ab" * 32


def _listening(pids: set[int]) -> set[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    """The addresses the TCP sockets of ``pids`` listen on (from /proc)."""
    inodes = set()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    link = os.readlink(f"/proc/{pid}/fd/{fd}")
                    if link.startswith("socket:["):
                        inodes.add(link[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and inode in inodes:  # 0A: LISTEN
                raw = bytes.fromhex(local.split(":")[0])
                raw = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
                ip = ipaddress.ip_address(raw)
                found.add(getattr(ip, "ipv4_mapped", None) or ip)
    return found


def test_sigterm_with_actor_procs_saves_the_run_interrupted_and_ray_stays_on_localhost(
    tmp_path,
):
    run, home = tmp_path / "run", tmp_path / "home"
    home.mkdir()
    argv = ["train", "r2d2", "--env", "CartPole-v1", "--actor-procs", "1", "--num-actors", "1",
            "--hidden", "16", "--lstm", "16", "--total-env-steps", "1000000", "--eval-every",
            "0", "--no-progress", "--no-tensorboard", "--device", "cpu", "--run-dir",
            str(run)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(home))  # a token of its own, written here
    proc = subprocess.Popen([*CLI, *argv], env=env, start_new_session=True, text=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        _first_row(run, proc)
        ray_procs = _descendants(proc.pid)
        listening = _listening({proc.pid, *ray_procs})
        proc.send_signal(signal.SIGTERM)  # `kill -TERM PID`: the driver alone
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert ray_procs, "Ray's processes run under the training process"
    assert listening and all(ip.is_loopback for ip in listening), listening
    assert_saved_as_interrupted(run, signal.SIGTERM, proc.returncode, err)
    assert "Traceback" not in err and "SIGTERM received" not in err, err  # Ray's own handlers
    token = home / ".ray" / "auth_token"
    assert token.stat().st_mode & 0o777 == 0o600 and len(token.read_text()) == 64
    time.sleep(1.0)
    assert not [p for p in ray_procs if _alive(p)], "Ray's processes outlived the run"


CHECK = """
import os, sys
from agents.core.ray_access import auth_mode, check_cluster
for case in sys.argv[2:]:  # TOKEN,AUTH: the token given (none: no token), auth on or off
    token, auth = case.split(",")
    os.environ.pop("RAY_AUTH_MODE", None)
    os.environ.pop("RAY_AUTH_TOKEN", None)
    if token != "none":
        os.environ["RAY_AUTH_TOKEN"] = token
    mode = auth_mode(auth == "on")
    if "ray._raylet" in sys.modules:
        sys.modules["ray._raylet"].AuthenticationTokenLoader.instance().reset_cache()
    try:
        check_cluster(sys.argv[1], mode)
        print("ok")
    except ValueError as exc:
        print(exc)
"""


def _check(address: str, home: Path, *cases: str) -> list[str]:
    """What joining ``address`` says for each case (``TOKEN,AUTH``), as the pool checks before
    ``ray.init``; nothing else is written (Ray's own refusals on stderr are not shown)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update(PYTHONPATH=str(ROOT), HOME=str(home))
    out = subprocess.run([sys.executable, "-c", CHECK, address, *cases], env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0 and not out.stderr, out.stderr
    return out.stdout.splitlines()


def test_a_token_mismatch_with_the_cluster_is_one_line(tmp_path):
    home = tmp_path / "home"  # no ~/.ray/auth_token
    home.mkdir()
    get = "`ray get-auth-token` on the cluster's head prints it"
    with ray_head(TOKEN) as address:
        lines = _check(address, home, "none,on", f"{'cd' * 32},on", f"{TOKEN},off", f"{TOKEN},on")
    assert lines == [
        f"--ray-address {address}: this run uses token authentication (RAY_AUTH_MODE=token) but "
        f"has no token: set RAY_AUTH_TOKEN to the cluster's token ({get}) or write it to "
        "~/.ray/auth_token (chmod 600)",
        f"--ray-address {address}: the cluster refused this run's token (RAY_AUTH_TOKEN or "
        f"~/.ray/auth_token): expected the cluster's token ({get})",
        f"--ray-address {address}: the cluster uses token authentication and this run has it "
        "off (--no-ray-auth or RAY_AUTH_MODE=disabled): leave both out and give the cluster's "
        f"token in RAY_AUTH_TOKEN ({get})",
        "ok",
    ]
    with ray_head(None) as address:
        lines = _check(address, home, f"{TOKEN},on", "none,off")
    assert lines == [
        f"--ray-address {address}: the cluster runs without token authentication (anyone who "
        "reaches it can run code on it) and this run uses it: restart the cluster with "
        "RAY_AUTH_MODE=token and RAY_AUTH_TOKEN set to this run's token, or pass --no-ray-auth "
        "(a trusted network only)",
        "ok",
    ]
    assert _check(address, home, f"{TOKEN},on") == [  # the head is gone: nothing answers
        f"--ray-address {address}: expected a running Ray cluster there, got no answer "
        "(Connection refused)"
    ]


@pytest.mark.slow  # a training process of its own: about 15 s on a loaded 2-core machine
def test_joining_a_cluster_with_no_token_is_one_line_and_leaves_no_run_folder(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with ray_head(TOKEN) as address:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
        env.update(PYTHONPATH=str(ROOT), HOME=str(home))
        argv = ["train", "r2d2", "--env", "CartPole-v1", "--actor-procs", "1", "--num-actors",
                "1", "--ray-address", address, "--hidden", "16", "--lstm", "16",
                "--total-env-steps", "100", "--min-replay", "8", "--no-progress",
                "--no-tensorboard", "--device", "cpu", "--run-dir", str(home / "run")]  # fmt: skip
        out = subprocess.run([*CLI, *argv], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 2 and out.stderr.splitlines() == [
        f"demostudio: error: --ray-address {address}: this run uses token authentication "
        "(RAY_AUTH_MODE=token) but has no token: set RAY_AUTH_TOKEN to the cluster's token "
        "(`ray get-auth-token` on the cluster's head prints it) or write it to "
        "~/.ray/auth_token (chmod 600)"
    ]
    assert not (home / "run").exists()
