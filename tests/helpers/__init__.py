"""Helpers shared by the reliability suites and their soak variants in ``bench/``."""
