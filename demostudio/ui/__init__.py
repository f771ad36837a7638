"""What the windows share: drawing pieces (``theme``, pygame), the display check
(``display``) and the user's settings and recordings folder (``settings``); the last two
import no pygame at module level, so the CLI can use them before any window opens."""
