"""Coordinators: producer ids now; the group and transaction coordinators live here too."""
