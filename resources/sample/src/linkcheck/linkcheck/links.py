"""Link extraction and URL validation."""
import re
from urllib.parse import urlparse

_LINK = re.compile(r"\[([^\]]*)\]\(([^)\s]+)\)")


def extract_links(markdown):
    """Return ``(text, url)`` pairs of inline Markdown links, in order."""
    return _LINK.findall(markdown)


def is_valid_url(url):
    """True for absolute http(s) URLs with a host."""
    parts = urlparse(url)
    return parts.scheme in ("http", "https") and bool(parts.netloc)
