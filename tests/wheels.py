"""Pure-Python wheels of distributions no index has, for tests that install them."""

from __future__ import annotations

import zipfile
from base64 import urlsafe_b64encode
from hashlib import sha256
from pathlib import Path


def pure_wheel(folder: Path, name: str, files: dict[str, str], version: str = "1.0") -> Path:
    """``name`` ``version`` as a ``py3-none-any`` wheel in ``folder`` holding ``files`` (path → text),
    with the metadata and RECORD an installer checks."""
    stem = f"{name.replace('-', '_')}-{version}"
    meta = {
        f"{stem}.dist-info/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        f"{stem}.dist-info/WHEEL": "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    contents = {path: text.encode() for path, text in {**files, **meta}.items()}
    record = "".join(f"{path},sha256={_digest(data)},{len(data)}\n" for path, data in contents.items())
    contents[f"{stem}.dist-info/RECORD"] = f"{record}{stem}.dist-info/RECORD,,\n".encode()
    wheel = folder / f"{stem}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, data in contents.items():
            archive.writestr(path, data)
    return wheel


def _digest(data: bytes) -> str:
    return urlsafe_b64encode(sha256(data).digest()).rstrip(b"=").decode()
