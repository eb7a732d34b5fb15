import pytest

from textkit import Vocabulary
from textkit.vocab import PAD, UNK


def roundtrip(vocab, tokens):
    """Helper: encode then decode through the vocabulary."""
    return vocab.decode(vocab.encode(tokens))


def test_init_has_specials():
    v = Vocabulary()
    assert v.itos == [PAD, UNK]


def test_init_requires_unk():
    with pytest.raises(ValueError):
        Vocabulary(specials=(PAD,))


def test_build_orders_by_frequency(vocab: Vocabulary):
    assert vocab.itos[2] == "the"
    assert vocab.stoi["the"] == 2


def test_build_min_freq(tokenized_corpus):
    v = Vocabulary()
    v.build(tokenized_corpus, min_freq=2)
    assert sorted(v.itos[2:]) == ["a", "cat", "dog", "sat", "the"]


def test_build_max_size(tokenized_corpus):
    v = Vocabulary()
    v.build(tokenized_corpus, max_size=4)
    assert v.size() == 4


def test_size(vocab: Vocabulary):
    assert vocab.size() == 2 + 8


def test_size_empty():
    empty = Vocabulary()
    assert empty.size() == 2


def test_encode_known(vocab: Vocabulary):
    ids = vocab.encode(["the", "cat"])
    assert ids == [vocab.stoi["the"], vocab.stoi["cat"]]


def test_encode_unknown(vocab: Vocabulary):
    assert vocab.encode(["zebra"]) == [1]


def test_roundtrip(vocab: Vocabulary):
    assert roundtrip(vocab, ["the", "dog", "sat"]) == ["the", "dog", "sat"]


def test_roundtrip_drops_unknown(vocab: Vocabulary):
    assert roundtrip(vocab, ["the", "zebra"]) == ["the"]


def test_decode_keep_special(vocab: Vocabulary):
    assert vocab.decode([0, 2], skip_special=False) == [PAD, "the"]


def test_decode_out_of_range(vocab: Vocabulary):
    with pytest.raises(IndexError):
        vocab.decode([99])


def test_token_to_id(vocab: Vocabulary):
    assert vocab.token_to_id("zebra") == 1
