"""Planners over a MiniGrid env's true grid (``env.unwrapped``: ``grid``, ``agent_pos``,
``agent_dir``, ``carrying``), used to record expert demos.

* :class:`DoorKeyPlanner` (DoorKey): fetch the key, open the door, walk to the goal.
* :class:`RoomPlanner` (KeyCorridor, ObstructedMaze-1D*): pick up the mission's object
  (``env.unwrapped.obj``) behind a locked door, opening the closed doors on the way, fetching
  the door's key (from a box when it is hidden in one) and moving a ball that blocks the door.

Both search the agent's poses (cell, direction) breadth first, so every route is a shortest
one. :class:`RoomPlanner` decides from the state alone at every step (it keeps no plan), so
whatever happened since the last step, its next action is the expert's from where the agent
really is.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import gymnasium as gym

# MiniGrid actions and directions (0 = right, 1 = down, 2 = left, 3 = up).
LEFT, RIGHT, FORWARD, PICKUP, DROP, TOGGLE, DONE = range(7)
DIR_VEC = ((1, 0), (0, 1), (-1, 0), (0, -1))

Cell = tuple[int, int]
Pose = tuple[Cell, int]


def find(grid, kind: str, color: str | None = None) -> Cell | None:
    """The first cell (row by row) holding an object of type ``kind`` (and ``color``)."""
    for cell, obj in objects(grid):
        if obj.type == kind and (color is None or obj.color == color):
            return cell
    return None


def objects(grid) -> Iterator[tuple[Cell, Any]]:
    """Every (cell, object) of ``grid``, row by row."""
    for j in range(grid.height):
        for i in range(grid.width):
            obj = grid.get(i, j)
            if obj is not None:
                yield (i, j), obj


def front(pos: Cell, d: int) -> Cell:
    return (pos[0] + DIR_VEC[d][0], pos[1] + DIR_VEC[d][1])


def route(
    base, goal: Callable[[Cell, int], bool], passable: Callable[[Any], bool]
) -> list[int] | None:
    """The shortest action list from the agent's pose to a pose where ``goal(cell, dir)``
    holds, turning and moving forward into cells whose object ``passable`` accepts (None:
    an empty cell); None when no such pose can be reached."""
    start: Pose = (tuple(base.agent_pos), int(base.agent_dir))
    frontier = deque([start])
    came: dict[Pose, tuple[Pose, int] | None] = {start: None}
    while frontier:
        pos, d = frontier.popleft()
        if goal(pos, d):
            actions = []
            node = (pos, d)
            while (step := came[node]) is not None:
                node, action = step
                actions.append(action)
            return actions[::-1]
        nxt_pos = front(pos, d)
        moves = [((pos, (d - 1) % 4), LEFT), ((pos, (d + 1) % 4), RIGHT)]
        if passable(base.grid.get(*nxt_pos)):
            moves.append(((nxt_pos, d), FORWARD))
        for nxt, action in moves:
            if nxt not in came:
                came[nxt] = ((pos, d), action)
                frontier.append(nxt)
    return None


def _open(cell) -> bool:
    return cell is None or cell.can_overlap()


class DoorKeyPlanner:
    """Plans on the true grid: go to the key, pick it up, open the door, go to the goal."""

    name = "policy:scripted-doorkey"

    def __init__(self) -> None:
        self._plan: deque[int] = deque()

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        self._plan.clear()

    def _route(self, base, target: Cell, stand_on: bool) -> list[int]:
        """Shortest action list from the agent's pose to facing (or standing on) ``target``."""
        if stand_on:
            found = route(base, lambda pos, d: pos == target, _open)
        else:
            found = route(base, lambda pos, d: front(pos, d) == target, _open)
        return found or []

    def act(self, env: gym.Env, observation: Any) -> int:
        if self._plan:
            return self._plan.popleft()
        base = env.unwrapped
        key = find(base.grid, "key")
        door = find(base.grid, "door")
        if base.carrying is None and key is not None:
            self._plan.extend([*self._route(base, key, False), PICKUP])
        elif door is not None and not base.grid.get(*door).is_open:
            self._plan.extend([*self._route(base, door, False), TOGGLE])
        else:
            goal = find(base.grid, "goal")
            self._plan.extend(self._route(base, goal, True) if goal else [FORWARD])
        return self._plan.popleft() if self._plan else FORWARD


class RoomPlanner:
    """Picks up ``env.unwrapped.obj`` (KeyCorridor's and ObstructedMaze's ball), deciding each
    step from the true state:

    1. the object can be reached without unlocking anything: free the hands (drop what is
       carried where it blocks nothing still needed), walk up to it, pick it up;
    2. else a locked door is in the way: when a ball blocks the only cell the door can be
       faced from, move the ball out of the way; when the door's key is carried, walk up to
       the door and open it; else pick up the key, or open the box that hides it.

    Closed (unlocked) doors on a route are opened when reached (toggle, then forward).
    """

    def __init__(self, name: str):
        self.name = f"policy:scripted-{name}"

    def reset(self, env: gym.Env, observation: Any, info: dict) -> None:
        pass

    def act(self, env: gym.Env, observation: Any) -> int:
        base = env.unwrapped
        actions = self._next(base)
        if not actions:  # nothing reachable to do: cannot happen on a solvable layout
            return DONE
        first = actions[0]
        ahead = base.grid.get(*front(tuple(base.agent_pos), int(base.agent_dir)))
        if first == FORWARD and ahead is not None and ahead.type == "door" and not ahead.is_open:
            return TOGGLE  # open the closed (or, key in hand, the locked) door on the route
        return first

    # ---- what to do next ---------------------------------------------------------------------

    def _next(self, base) -> list[int] | None:
        grid, carrying = base.grid, base.carrying
        target = self._cell_of(grid, base.obj)
        if target is None:
            return None
        free = self._passable(None)
        reachable = route(base, _facing(target), free) is not None
        if carrying is not None and carrying is not base.obj and reachable:
            return self._drop(base, target)
        to_target = route(base, _facing(target), self._passable(carrying))
        if to_target is not None:
            return [*to_target, PICKUP]
        door = self._locked_door(base)
        if door is None:
            return None
        door_obj = grid.get(*door)
        to_door = route(base, _facing(door), free)
        if to_door is None:
            blocker = self._blocker(base, door)
            if blocker is None:
                return None
            if carrying is not None:
                return self._drop(base, target)
            found = route(base, _facing(blocker), free)
            return None if found is None else [*found, PICKUP]
        if _is_key_for(carrying, door_obj):
            return [*to_door, TOGGLE]
        if carrying is not None:  # the ball moved aside, another key, a box picked up
            return self._drop(base, target)
        key = find(grid, "key", door_obj.color)
        if key is not None:
            found = route(base, _facing(key), free)
            return None if found is None else [*found, PICKUP]
        for cell, obj in objects(grid):
            if obj.type == "box" and (found := route(base, _facing(cell), free)) is not None:
                return [*found, TOGGLE]  # the key is hidden in a box
        return None

    # ---- the grid ----------------------------------------------------------------------------

    @staticmethod
    def _cell_of(grid, obj) -> Cell | None:
        return next((cell for cell, o in objects(grid) if o is obj), None)

    @staticmethod
    def _passable(carrying) -> Callable[[Any], bool]:
        """Cells a route may enter: empty ones, open doors, closed doors (opened on the way)
        and locked doors whose key is carried."""

        def passable(cell) -> bool:
            if cell is None or cell.can_overlap():
                return True
            if cell.type != "door":
                return False
            return not cell.is_locked or _is_key_for(carrying, cell)

        return passable

    def _locked_door(self, base) -> Cell | None:
        """The locked door to open (the first found: these tasks have one)."""
        doors = [c for c, o in objects(base.grid) if o.type == "door" and o.is_locked]
        return doors[0] if doors else None

    def _blocker(self, base, door: Cell) -> Cell | None:
        """A movable object beside ``door`` that can be reached (the ball in front of it)."""
        free = self._passable(None)
        for d in range(4):
            cell = front(door, d)
            obj = base.grid.get(*cell)
            if (
                obj is not None
                and obj.can_pickup()
                and route(base, _facing(cell), free) is not None
            ):
                return cell
        return None

    def _needed(self, base, target: Cell) -> list[Cell]:
        """Cells that must stay reachable after a drop: the object, and while a door is locked
        the doors, keys and boxes."""
        cells = [target]
        if any(o.type == "door" and o.is_locked for _, o in objects(base.grid)):
            cells += [c for c, o in objects(base.grid) if o.type in ("door", "key", "box")]
        return cells

    def _drop(self, base, target: Cell) -> list[int] | None:
        """Walk to the nearest pose facing an empty cell where the carried object blocks
        nothing still needed, and drop it there."""
        needed = self._needed(base, target)
        free = self._passable(None)

        def movable(cell) -> bool:  # what the planner can walk through, open or move aside
            return free(cell) or cell.can_pickup() or cell.type == "door"

        def safe(pos: Cell, d: int) -> bool:
            cell = front(pos, d)
            if base.grid.get(*cell) is not None:
                return False
            reach = _reachable(base.grid, pos, movable, blocked=cell)
            return all(any(front(n, k) in reach for k in range(4)) for n in needed)

        found = route(base, safe, free)
        return None if found is None else [*found, DROP]


def _facing(target: Cell) -> Callable[[Cell, int], bool]:
    return lambda pos, d: front(pos, d) == target


def _is_key_for(carrying, door) -> bool:
    return carrying is not None and carrying.type == "key" and carrying.color == door.color


def _reachable(grid, start: Cell, passable: Callable[[Any], bool], blocked: Cell) -> set[Cell]:
    """Cells reachable from ``start`` through ``passable`` cells, ``blocked`` excluded."""
    seen = {start}
    todo = [start]
    while todo:
        pos = todo.pop()
        for d in range(4):
            nxt = front(pos, d)
            inside = 0 <= nxt[0] < grid.width and 0 <= nxt[1] < grid.height
            if nxt in seen or nxt == blocked or not inside:
                continue
            if passable(grid.get(*nxt)):
                seen.add(nxt)
                todo.append(nxt)
    return seen


__all__ = ["DoorKeyPlanner", "RoomPlanner", "find", "objects", "route"]
