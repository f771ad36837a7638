"""The launcher: pick a game (bundled list or any registered env id), set the player, see how
many recordings each game has, play, open the replay viewer on a folder, or train an agent on
the game's recordings and follow its runs (the Train panel, :mod:`training`)."""

from demostudio.launcher.window import Launcher, run_launcher

__all__ = ["Launcher", "run_launcher"]
