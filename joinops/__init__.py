"""joinops."""
