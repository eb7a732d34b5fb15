from linkcheck import extract_links, is_valid_url


def test_extract_links():
    assert extract_links("see [a](http://x.org) and [b](https://y.org/p)") == [
        ("a", "http://x.org"),
        ("b", "https://y.org/p"),
    ]


def test_valid_url():
    assert is_valid_url("https://example.org/page")


def test_invalid_url():
    assert not is_valid_url("ftp:/nohost")
