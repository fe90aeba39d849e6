"""Teaching the tower its own dice: group, name, fit and read (docs/teach.md)."""
