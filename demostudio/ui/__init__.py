"""Drawing pieces shared by the play window, the launcher and the replay viewer (pygame)."""
