"""The real OpenAPI descriptions in tests/fixtures/openapi/ (see its SOURCES file), copied into a test's repository."""

import lzma
import shutil
from pathlib import Path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "openapi"


def sources() -> list[dict]:
    """SOURCES as rows: file, package, version, licence, path (in the package), sha256 (of the uncompressed file)."""
    keys = ("file", "package", "version", "licence", "path", "sha256")
    lines = (FIXTURES / "SOURCES").read_text(encoding="utf-8").splitlines()
    return [dict(zip(keys, line.split("\t"), strict=True)) for line in lines if line and not line.startswith("#")]


def spec_bytes(name: str) -> bytes:
    """The uncompressed bytes of fixture `name` (`api.github.com.json` reads `api.github.com.json.xz`)."""
    plain = FIXTURES / name
    if plain.is_file():
        return plain.read_bytes()
    return lzma.decompress((FIXTURES / f"{name}.xz").read_bytes())


def copy_spec(name: str, repo: Path, as_path: str | None = None) -> str:
    """Writes fixture `name`, uncompressed, into `repo` at `as_path` (default: its name); returns that path."""
    relative = as_path or name
    target = repo / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    if (FIXTURES / name).is_file():
        shutil.copyfile(FIXTURES / name, target)
    else:
        target.write_bytes(spec_bytes(name))
    return relative
