import pytest

from textkit import Vocabulary, whitespace_tokenize

CORPUS = ["the cat sat on the mat", "the dog sat", "a cat and a dog"]


@pytest.fixture
def tokenized_corpus() -> list:
    return [whitespace_tokenize(line) for line in CORPUS]


@pytest.fixture
def vocab(tokenized_corpus) -> Vocabulary:
    vocabulary = Vocabulary()
    vocabulary.build(tokenized_corpus)
    return vocabulary
