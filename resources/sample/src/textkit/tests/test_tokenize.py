import pytest

from textkit import char_tokenize, ngrams, normalize_text, regex_tokenize, whitespace_tokenize


def test_normalize_text_lower_and_punct():
    assert normalize_text("Hello, World!") == "hello world"


def test_normalize_text_collapses_spaces():
    assert normalize_text("  a \t b\n") == "a b"


def test_normalize_then_tokenize():
    assert whitespace_tokenize(normalize_text("It's  FINE.")) == ["its", "fine"]


@pytest.mark.parametrize(
    "text, expected",
    [("a b  c", ["a", "b", "c"]), ("", []), ("  x\ty\n", ["x", "y"])],
)
def test_whitespace_tokenize(text, expected):
    assert whitespace_tokenize(text) == expected


def test_whitespace_tokenize_lowercase():
    assert whitespace_tokenize("The Cat", lowercase=True) == ["the", "cat"]


def test_regex_tokenize_default_keeps_punctuation():
    assert regex_tokenize("Hi, there!") == ["Hi", ",", "there", "!"]


def test_regex_tokenize_custom_pattern():
    assert regex_tokenize("a1 b22 c333", pattern=r"\d+") == ["1", "22", "333"]


def test_regex_tokenize_empty():
    assert regex_tokenize("") == []


def test_char_tokenize():
    assert char_tokenize("ab c") == ["a", "b", " ", "c"]


def test_char_tokenize_without_spaces():
    assert char_tokenize("ab c", keep_spaces=False) == ["a", "b", "c"]


def test_char_tokenize_unicode():
    assert char_tokenize("né") == ["n", "é"]


class TestNgrams:
    def test_bigrams(self):
        assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]

    def test_unigrams(self):
        assert ngrams(["a", "b"], 1) == [("a",), ("b",)]

    def test_too_short(self):
        assert ngrams(["a"], 3) == []

    def test_invalid_n(self):
        with pytest.raises(ValueError):
            ngrams(["a"], 0)
