"""Which known tools a clause names: everyday words are tools only in technical company."""

from __future__ import annotations

import pytest

from convmem.memory.subjects import named_choices


@pytest.mark.parametrize(
    ("text", "names"),
    [
        # everyday words in chat name nothing
        ("I've got a few things with sentimental value", ()),
        ("Got it, thanks!", ()),
        ("Painting helps me express how I feel", ()),
        ("I love spring in Japan, the black pines are lovely", ()),
        ("I used to love spring", ()),
        # a verb-like name that does not count lends no company to another one
        ("I got to fetch the kids from school", ()),
        ("I got a puppy, he loves to fetch", ()),
        # the same words as tools
        ("use `got` instead of axios", ("got", "axios")),
        ("we run an express server on port 3000", ("express",)),
        ("We use Express for the API", ("express",)),
        ("switch the formatter to black", ("black",)),
        ("tabs or spaces?", ("tabs", "spaces")),
        ("deploy on render or vercel", ("render", "vercel")),
        ("I've got the tests passing with requests", ("requests",)),
        # names that are not everyday words count as they are
        ("let's move from redis to valkey", ("redis", "valkey")),
    ],
)
def test_named_choices(text: str, names: tuple[str, ...]) -> None:
    assert named_choices(text) == names
