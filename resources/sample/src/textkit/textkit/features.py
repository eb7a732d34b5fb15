"""Numeric features from tokenized text."""
import numpy as np

from .vocab import Vocabulary


def bag_of_words(tokens, vocab: Vocabulary):
    """Count vector of a token list over a vocabulary.

    Args:
        tokens: list of tokens.
        vocab: the vocabulary; unknown tokens are counted at the ``<unk>`` id.

    Returns:
        np.ndarray: int64 counts of shape (vocab.size(),).
    """
    counts = np.zeros(vocab.size(), dtype=np.int64)
    np.add.at(counts, vocab.encode(tokens), 1)
    return counts


def document_frequency(docs):
    """Number of documents each term occurs in.

    Args:
        docs: list of token lists.

    Returns:
        dict[str, int]: term -> document count.
    """
    df = {}
    for doc in docs:
        for term in set(doc):
            df[term] = df.get(term, 0) + 1
    return df


def tfidf(docs, smooth=True):
    """TF-IDF matrix of a small corpus.

    Term frequency is the raw count divided by the document length; inverse document
    frequency is ``log((1 + N) / (1 + df)) + 1`` when ``smooth`` (as in scikit-learn),
    else ``log(N / df) + 1``. Rows are L2-normalized.

    Args:
        docs: list of token lists.
        smooth: use smoothed idf.

    Returns:
        tuple[np.ndarray, list[str]]: the (n_docs, n_terms) matrix and the sorted terms.
    """
    df = document_frequency(docs)
    terms = sorted(df)
    index = {term: j for j, term in enumerate(terms)}
    n = len(docs)
    matrix = np.zeros((n, len(terms)))
    for i, doc in enumerate(docs):
        for term in doc:
            matrix[i, index[term]] += 1.0 / len(doc)
    dfs = np.array([df[t] for t in terms], dtype=np.float64)
    idf = np.log((1 + n) / (1 + dfs)) + 1 if smooth else np.log(n / dfs) + 1
    matrix *= idf
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms), terms


def truncate_sequences(sequences, maxlen, truncating="post"):
    """Cut every sequence to at most ``maxlen`` items, from the end or the start."""
    if truncating == "pre":
        return [list(seq[-maxlen:]) if maxlen else [] for seq in sequences]
    return [list(seq[:maxlen]) for seq in sequences]


def pad_sequences(sequences, maxlen=None, value=0, padding="post", truncating="post"):
    """Pad (and truncate) integer sequences into a 2-D array.

    Args:
        sequences: list of int lists.
        maxlen: output length; defaults to the longest sequence.
        value: padding value.
        padding: ``"post"`` pads at the end, ``"pre"`` at the start.
        truncating: ``"post"`` or ``"pre"``: where longer sequences are cut.

    Returns:
        np.ndarray: int64 array of shape (len(sequences), maxlen).
    """
    if padding not in ("pre", "post") or truncating not in ("pre", "post"):
        raise ValueError("padding and truncating must be 'pre' or 'post'")
    if maxlen is None:
        maxlen = max((len(s) for s in sequences), default=0)
    out = np.full((len(sequences), maxlen), value, dtype=np.int64)
    for i, seq in enumerate(truncate_sequences(sequences, maxlen, truncating)):
        if not seq:
            continue
        if padding == "post":
            out[i, :len(seq)] = seq
        else:
            out[i, maxlen - len(seq):] = seq
    return out
