import numpy as np
import pytest

from textkit import Vocabulary, bag_of_words, document_frequency, pad_sequences, tfidf
from textkit.features import truncate_sequences


def test_document_frequency(tokenized_corpus):
    df = document_frequency(tokenized_corpus)
    assert df["the"] == 2
    assert df["a"] == 1


def test_document_frequency_empty():
    assert document_frequency([]) == {}


def test_document_frequency_counts_once_per_doc():
    assert document_frequency([["x", "x", "x"]]) == {"x": 1}


def test_tfidf_rows_are_unit_norm(tokenized_corpus):
    matrix, terms = tfidf(tokenized_corpus)
    assert matrix.shape == (3, len(terms))
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0)


def test_tfidf_matches_formula():
    docs = [["a", "b"], ["a"]]
    matrix, terms = tfidf(docs)
    assert terms == ["a", "b"]
    idf_b = np.log(3 / 2) + 1
    raw = np.array([0.5 * 1.0, 0.5 * idf_b])
    assert np.allclose(matrix[0], raw / np.linalg.norm(raw))
    assert np.allclose(matrix[1], [1.0, 0.0])


def test_tfidf_unsmoothed_common_term():
    matrix, terms = tfidf([["a", "b"], ["a", "c"]], smooth=False)
    # a occurs everywhere: idf 1; b and c: log(2) + 1.
    expected = np.array([1.0, np.log(2) + 1, 0.0])
    assert np.allclose(matrix[0], expected / np.linalg.norm(expected))


def test_bag_of_words(vocab: Vocabulary):
    counts = bag_of_words(["the", "the", "cat"], vocab)
    assert counts[vocab.stoi["the"]] == 2
    assert counts.sum() == 3


def test_bag_of_words_unknown(vocab: Vocabulary):
    counts = bag_of_words(["zebra", "zebra"], vocab)
    assert counts[1] == 2


def test_bag_of_words_small_vocab():
    v = Vocabulary()
    v.build([["x"]])
    assert bag_of_words(["x", "y"], v).tolist() == [0, 1, 1]


@pytest.mark.parametrize("padding, expected", [("post", [[1, 2, 0], [3, 0, 0]]), ("pre", [[0, 1, 2], [0, 0, 3]])])
def test_pad_sequences_padding(padding, expected):
    assert pad_sequences([[1, 2], [3]], maxlen=3, padding=padding).tolist() == expected


def test_pad_sequences_truncate():
    out = pad_sequences([[1, 2, 3, 4]], maxlen=2, truncating="pre")
    assert out.tolist() == [[3, 4]]


def test_pad_sequences_value_and_empty():
    out = pad_sequences([[], [5]], maxlen=2, value=-1)
    assert out.tolist() == [[-1, -1], [5, -1]]


def test_pad_sequences_bad_mode():
    with pytest.raises(ValueError):
        pad_sequences([[1]], padding="middle")


def test_truncate_sequences():
    assert truncate_sequences([[1, 2, 3]], 2) == [[1, 2]]
