"""Build the Foundry module's zip: ``python3 foundry/build.py`` writes ``dist/dicetower-foundry.zip``.

The zip holds what Foundry loads (``module.json``, ``scripts/``, ``styles/``, ``lang/``) at its root, as
Foundry's installer expects; the tests and this script stay out. With ``--base-url URL`` (where the zip and
its manifest will be served), ``module.json`` in the zip and beside it names its ``manifest`` and ``download``
addresses, so Foundry can install it from the manifest URL and offer updates.
"""

from __future__ import annotations

import argparse
import json
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIPPED = ("scripts", "styles", "lang")
ZIP_NAME = "dicetower-foundry.zip"


def manifest(base_url: str | None) -> dict:
    """module.json, with the addresses it is served from when ``base_url`` is given."""
    document = json.loads((HERE / "module.json").read_text(encoding="utf-8"))
    if base_url:
        base = base_url.rstrip("/")
        document["manifest"] = f"{base}/module.json"
        document["download"] = f"{base}/{ZIP_NAME}"
    return document


def build(out: Path, base_url: str | None = None) -> Path:
    """Write the zip (and its module.json) into ``out``; returns the zip's path."""
    out.mkdir(parents=True, exist_ok=True)
    text = json.dumps(manifest(base_url), indent=2) + "\n"
    target = out / ZIP_NAME
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("module.json", text)
        for folder in SHIPPED:
            for path in sorted((HERE / folder).rglob("*")):
                if path.is_file():
                    archive.write(path, path.relative_to(HERE).as_posix())
    (out / "module.json").write_text(text, encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("dist"), help="folder for the zip (default: dist)")
    parser.add_argument(
        "--base-url", help="where the zip and module.json will be served, e.g. https://host/dicetower"
    )
    args = parser.parse_args(argv)
    print(build(args.out, args.base_url))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
