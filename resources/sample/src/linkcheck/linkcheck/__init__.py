"""Find and validate links in Markdown files."""
from .links import extract_links, is_valid_url

__all__ = ["extract_links", "is_valid_url"]
