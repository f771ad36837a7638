"""Library commands: ``ls``, ``info``, ``validate``, ``verify``, ``recover``, ``tag``,
``compact``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from pathlib import Path

from demostudio.cli import CommandError
from demostudio.cli.table import format_table, terminal_width
from demostudio.episode import (
    EpisodeError,
    compact_episode,
    describe_datasets,
    find_episodes,
    open_episode,
    recover_folder,
    recover_partial,
    scan,
    update_metadata,
    validate,
    verify_episode,
)
from demostudio.episode.attrs import printable


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _file_size(path: Path) -> str:
    try:
        return _size(path.stat().st_size)
    except OSError:  # a link loop or a link to nothing
        return "-"


def _when(iso: str) -> str:
    try:
        return datetime.fromisoformat(iso).strftime("%Y-%m-%d %H:%M")
    except ValueError:
        return iso[:16]


LS_DROP = ("takeovers", "human", "size", "recorded", "player", "controller", "end", "tags")
"""The columns ``ls`` leaves out to fit the terminal, least useful first (the file, env,
length and return stay)."""


def cmd_ls(args: argparse.Namespace) -> int:
    entries = scan(args.paths)
    if not entries:
        print(printable(f"no episodes under {', '.join(map(str, args.paths))}"))
        return 0
    header = [
        "file",
        "env",
        "controller",
        "player",
        "length",
        "return",
        "human",
        "takeovers",
        "end",
        "recorded",
        "size",
        "tags",
    ]
    rows = []
    bad = 0
    for e in entries:
        name = str(e.path)
        if e.summary is None:
            bad += 1
            rows.append(
                [
                    name,
                    "BAD FILE" if not e.partial else "PARTIAL",
                    e.error or "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    "",
                    _file_size(e.path),
                    "",
                ]
            )
            continue
        s = e.summary
        end = "terminated" if s.terminated else ("truncated" if s.truncated else "-")
        if s.recovered:
            end += " (recovered)"
        rows.append(
            [
                name,
                s.env_id,
                s.controller,
                s.player or "-",
                str(s.length),
                f"{s.total_return:.2f}",
                f"{s.human_share:.0%}",
                str(s.takeovers),
                end,
                _when(s.recorded_at),
                _size(s.size_bytes),
                ",".join(s.tags),
            ]
        )
    width = terminal_width()
    name_width = max((len(e.path.name) for e in entries), default=0) + 1
    print(format_table(header, rows, width, LS_DROP, tail=("file",),
                       floor={"file": name_width}))  # fmt: skip
    reasons = [e for e in entries if e.summary is None and e.error]
    if width is not None and reasons:  # cut from their rows: in full here
        print()
        for e in reasons:
            print(printable(f"{e.path}: {e.error}"))
    good = len(entries) - bad
    print(f"\n{good} episode(s)" + (f", {bad} unreadable or partial" if bad else ""))
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    with open_episode(args.file) as ep:
        print(f"file: {printable(str(ep.path))} ({_size(ep.summary.size_bytes)})")
        s = ep.summary
        print(
            f"who acted: {s.human_share:.0%} of steps by a person, {s.takeovers} takeover(s) "
            f"({printable(', '.join(ep.actors.names))})"
        )
        print("\nmetadata:")
        for key in sorted(ep.attrs):
            value = ep.attrs[key]
            text = json.dumps(value) if not isinstance(value, str) else value
            if key == "env_spec" and not args.full and len(text) > 100:
                text = text[:97] + "..."
            print(f"  {printable(key)}: {printable(text)}")
        print("\ndatasets:")
        rows = [
            [name, str(shape), dtype, comp] for name, shape, dtype, comp in describe_datasets(ep)
        ]
        print(
            "  "
            + format_table(["name", "shape", "dtype", "compression"], rows).replace("\n", "\n  ")
        )
        ep.check_data()  # a file shown above can still hold actions training would trip on
    return 0


def _none_found(paths: list) -> int:
    """A check that found nothing to check does not pass: exit 1, saying where it looked."""
    print(printable(f"no episodes under {', '.join(map(str, paths))}"), file=sys.stderr)
    return 1


def cmd_validate(args: argparse.Namespace) -> int:
    files = find_episodes(args.paths)
    if not files:
        return _none_found(args.paths)
    bad = 0
    for path in files:
        problems = validate(path)
        if problems:
            bad += 1
            print(printable(f"INVALID {problems[0]}"))
            for extra in problems[1:]:
                print(printable(f"        {extra}"))
        elif not args.quiet:
            print(printable(f"ok      {path}"))
    print(f"\n{len(files) - bad} valid, {bad} invalid")
    return 1 if bad else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from demostudio.cli.progress import LazyBar

    failed = errors = 0
    files = find_episodes(args.paths)
    if not files:
        return _none_found(args.paths)
    for path in files:
        # drawn at the first re-simulated step: a file refused on opening gets one line
        with LazyBar(
            desc=printable(path.name), unit="step", leave=False, disable=args.quiet
        ) as bar:
            try:
                result = verify_episode(path, frames=not args.no_frames, progress=bar)
            except EpisodeError as exc:  # this file cannot be verified; the others still are
                error = exc
            else:
                error = None
        if error is not None:  # after the bar is gone, so the error starts its own line
            print(printable(f"demostudio: error: {error}"), file=sys.stderr)
            errors += 1
            continue
        print(printable(result.describe()))
        failed += not result.ok
    return 2 if errors else (1 if failed else 0)


def cmd_recover(args: argparse.Namespace) -> int:
    target = Path(args.path)
    if not target.exists():
        raise FileNotFoundError(f"{target}: no such .partial file or folder")
    results = recover_folder(target) if target.is_dir() else [recover_partial(target)]
    if not results:
        print(printable(f"nothing to recover under {target}"))
    unusable = 0
    for r in results:
        if r.episode is not None:
            print(printable(f"recovered  {r.episode}  ({r.reason})"))
        else:
            unusable += 1
            print(printable(f"unusable   {r.partial}  ({r.reason})"))
    return 1 if unusable else 0


def _is_path(value: str) -> bool:
    """A value of ``--add``/``--remove`` that is an episode path rather than a tag."""
    return value.endswith(".h5") or "/" in value


def _writable(paths: list[Path], command: str) -> list[Path]:
    """The episodes under ``paths`` that ``command`` edits in place; CommandError, before any
    is written, when one of them is a bundled sample (samples are read, never written)."""
    from shlex import quote

    from demostudio.assets import SAMPLE_DEMOS
    from demostudio.ui.settings import derived_output_folder

    found = find_episodes(paths)
    for path in found:
        mine = derived_output_folder(path)  # None: not a sample
        if mine is not None:
            raise CommandError(
                f"{path}: expected one of your episodes, got a bundled sample (the samples in "
                f"{SAMPLE_DEMOS} are never written to); to {command} it, copy it to your "
                f"recordings first: mkdir -p {quote(str(mine))} && cp {quote(str(path))} "
                f"{quote(str(mine))}/"
            )
    return found


def cmd_tag(args: argparse.Namespace) -> int:
    # ``tag --add bad FILE`` works like ``tag FILE --add bad``: --add and --remove take any
    # number of tags, so paths given after them end up among their values.
    files = list(args.files)
    for name in ("add", "remove"):
        values = getattr(args, name)
        files += [Path(v) for v in values if _is_path(v)]
        setattr(args, name, [v for v in values if not _is_path(v)])
    if not files:
        raise CommandError(
            "expected episode files or folders to tag (paths end in .h5 or contain a /), got none"
        )
    found = _writable(files, "tag")
    if not found:
        return _none_found(files)
    for path in found:
        with open_episode(path) as ep:
            tags = set(ep.summary.tags)
        tags |= set(args.add)
        tags -= set(args.remove)
        update_metadata(path, tags=sorted(tags), notes=args.notes)
        print(printable(f"{path}: tags {','.join(sorted(tags)) or '-'}"))
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    found = _writable(args.paths, "compact")
    if not found:
        return _none_found(args.paths)
    total_before = total_after = 0
    for path in found:
        r = compact_episode(path, level=args.level)
        total_before += r.bytes_before
        total_after += r.bytes_after
        if r.skipped:
            print(printable(f"{path}: {r.skipped}, skipped"))
        else:
            print(printable(f"{path}: {_size(r.bytes_before)} -> {_size(r.bytes_after)}"))
    if total_before:
        print(
            f"\ntotal {_size(total_before)} -> {_size(total_after)} "
            f"({100 * total_after / total_before:.0f}%)"
        )
    return 0


def _deflate_level(text: str) -> int:
    """``--level``'s value, checked while parsing so a bad one is a usage error."""
    try:
        level = int(text)
    except ValueError:
        level = None
    if level is None or not 1 <= level <= 9:
        raise argparse.ArgumentTypeError(f"expected a deflate level from 1 to 9, got {text!r}")
    return level


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("ls", help="list the episodes in folders, one row each")
    p.add_argument(
        "paths",
        nargs="*",
        type=Path,
        default=[Path("demos")],
        help="episode files or folders (default: demos)",
    )
    p.set_defaults(func=cmd_ls)

    p = subparsers.add_parser("info", help="all metadata and datasets of one episode")
    p.add_argument("file", type=Path)
    p.add_argument("--full", action="store_true", help="do not shorten long values")
    p.set_defaults(func=cmd_info)

    p = subparsers.add_parser("validate", help="check episode files against the schema")
    p.add_argument("paths", nargs="+", type=Path, help="episode files or folders")
    p.add_argument("-q", "--quiet", action="store_true", help="print only invalid files")
    p.set_defaults(func=cmd_validate)

    p = subparsers.add_parser(
        "verify", help="re-simulate episodes from their seed and actions and compare"
    )
    p.add_argument("paths", nargs="+", type=Path, help="episode files or folders")
    p.add_argument("--no-frames", action="store_true", help="skip comparing rendered frames")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_verify)

    p = subparsers.add_parser("recover", help="recover .partial files left by a crash")
    p.add_argument("path", type=Path, help="a folder (searched recursively) or one .partial")
    p.set_defaults(func=cmd_recover)

    p = subparsers.add_parser(
        "compact", help="re-compress episodes' frames harder (lossless, in place)"
    )
    p.add_argument("paths", nargs="+", type=Path, help="episode files or folders")
    p.add_argument("--level", type=_deflate_level, default=9, help="deflate level 1-9 (default: 9)")
    p.set_defaults(func=cmd_compact)

    p = subparsers.add_parser("tag", help="add or remove tags (and set notes) of episodes")
    p.add_argument(
        "files", nargs="*", type=Path, help="episode files or folders (before or after the tags)"
    )
    p.add_argument("--add", nargs="*", default=[], help="tags to add, e.g. good")
    p.add_argument("--remove", nargs="*", default=[], help="tags to remove")
    p.add_argument("--notes", default=None, help="replace the notes")
    p.set_defaults(func=cmd_tag)
