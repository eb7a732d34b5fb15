"""textkit: tokenizers, vocabularies and text features in plain numpy."""
from .tokenize import char_tokenize, ngrams, normalize_text, regex_tokenize, whitespace_tokenize
from .vocab import Vocabulary
from .features import bag_of_words, document_frequency, pad_sequences, tfidf, truncate_sequences

__all__ = [
    "Vocabulary",
    "bag_of_words",
    "char_tokenize",
    "document_frequency",
    "ngrams",
    "normalize_text",
    "pad_sequences",
    "regex_tokenize",
    "tfidf",
    "truncate_sequences",
    "whitespace_tokenize",
]
