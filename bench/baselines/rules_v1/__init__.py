"""rules-v1, frozen for comparison."""
