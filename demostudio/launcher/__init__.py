"""The launcher: pick a game (bundled list or any registered env id), set the player, see how
many recordings each game has, play, or open the replay viewer on a folder."""

from demostudio.launcher.window import Launcher, run_launcher

__all__ = ["Launcher", "run_launcher"]
