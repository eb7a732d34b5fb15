"""Collect: crawl GitHub topics, select repositories with reasons, clone them at pinned commits."""
