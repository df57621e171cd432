"""Checks of the code base itself: how much it says `Any`, what coverage measures."""
