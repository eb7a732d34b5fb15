"""Tokenizers and n-gram helpers."""
import re
import string

_PUNCT = str.maketrans("", "", string.punctuation)
DEFAULT_PATTERN = r"\w+|[^\w\s]"


def normalize_text(text):
    """Lower-case a string, drop ASCII punctuation and collapse whitespace.

    Args:
        text (str): raw text.

    Returns:
        str: the normalized text.
    """
    return " ".join(text.lower().translate(_PUNCT).split())


def whitespace_tokenize(text, lowercase=False):
    """Split text on runs of whitespace.

    Args:
        text (str): input text.
        lowercase (bool): lower-case the text first.

    Returns:
        list[str]: the tokens.
    """
    if lowercase:
        text = text.lower()
    return text.split()


def regex_tokenize(text, pattern=DEFAULT_PATTERN):
    """Tokenize with a regular expression; every match is a token.

    Args:
        text (str): input text.
        pattern (str): regular expression; the default keeps words and punctuation marks.

    Returns:
        list[str]: the matches, in order.
    """
    return re.findall(pattern, text)


def char_tokenize(text, keep_spaces=True):
    """Split text into characters.

    Args:
        text (str): input text.
        keep_spaces (bool): keep whitespace characters as tokens.

    Returns:
        list[str]: one token per character.
    """
    return [ch for ch in text if keep_spaces or not ch.isspace()]


def ngrams(tokens, n):
    """Return the contiguous n-grams of a token sequence.

    Args:
        tokens (list[str]): tokens.
        n (int): n-gram size, at least 1.

    Returns:
        list[tuple[str, ...]]: the n-grams; empty when there are fewer than ``n`` tokens.

    Raises:
        ValueError: if ``n`` < 1.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    return [tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1)]
