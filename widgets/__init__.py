"""Textual widgets of the console: presentation only, they render engine events."""
