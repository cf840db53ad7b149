"""Install pip into this interpreter from PyPI's wheel (for Pythons whose ensurepip is missing)."""

import json
import subprocess
import sys
import tempfile
import urllib.request
from pathlib import Path

INDEX = "https://pypi.org/pypi/pip/json"


def main() -> None:
    """Download the newest pip wheel named by PyPI's JSON API and let it install itself."""
    with urllib.request.urlopen(INDEX, timeout=60) as response:
        release = json.load(response)
    wheel = next(f for f in release["urls"] if f["packagetype"] == "bdist_wheel")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / wheel["filename"]
        urllib.request.urlretrieve(wheel["url"], path)
        subprocess.run([sys.executable, f"{path}/pip", "install", "--quiet", str(path)], check=True)


if __name__ == "__main__":
    main()
