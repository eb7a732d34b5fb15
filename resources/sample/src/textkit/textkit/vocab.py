"""A token <-> id vocabulary."""
from collections import Counter

PAD = "<pad>"
UNK = "<unk>"


class Vocabulary:
    """Maps tokens to integer ids; id 0 is padding and id 1 the unknown token."""

    def __init__(self, specials=(PAD, UNK)):
        """Create a vocabulary holding only the special tokens.

        Args:
            specials: special tokens, given ids 0, 1, ... in order; must include ``<unk>``.
        """
        if UNK not in specials:
            raise ValueError("specials must include <unk>")
        self.itos = list(specials)
        self.stoi = {tok: i for i, tok in enumerate(self.itos)}

    def build(self, corpus, min_freq=1, max_size=None):
        """Add the tokens of a corpus, most frequent first.

        Ties in frequency are broken alphabetically so the ids are deterministic.

        Args:
            corpus: iterable of token lists.
            min_freq: tokens seen fewer times are left out.
            max_size: optional cap on the total vocabulary size (specials included).

        Returns:
            Vocabulary: ``self``, to allow chaining.
        """
        counts = Counter(tok for doc in corpus for tok in doc)
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        for token, freq in ranked:
            if freq < min_freq or (max_size is not None and len(self.itos) >= max_size):
                break
            if token not in self.stoi:
                self.stoi[token] = len(self.itos)
                self.itos.append(token)
        return self

    def size(self):
        """Return the number of tokens, specials included."""
        return len(self.itos)

    def token_to_id(self, token):
        """Return the id of ``token``, or the unknown id."""
        return self.stoi.get(token, self.stoi[UNK])

    def encode(self, tokens):
        """Map tokens to ids; unseen tokens map to the ``<unk>`` id.

        Args:
            tokens: list of tokens.

        Returns:
            list[int]: the ids.
        """
        unk = self.stoi[UNK]
        return [self.stoi.get(tok, unk) for tok in tokens]

    def decode(self, ids, skip_special=True):
        """Map ids back to tokens.

        Args:
            ids: iterable of ints.
            skip_special: drop the special tokens from the output.

        Returns:
            list[str]: the tokens.

        Raises:
            IndexError: for an id outside the vocabulary.
        """
        specials = set(self.itos[:2]) if skip_special else set()
        tokens = []
        for i in ids:
            if i < 0 or i >= len(self.itos):
                raise IndexError(f"id {i} out of range")
            if self.itos[i] not in specials:
                tokens.append(self.itos[i])
        return tokens
