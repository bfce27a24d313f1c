"""The app bundle's PyInstaller recipe (packaging/research-desk.spec) collects every runtime dependency."""

from __future__ import annotations

from tests.support.paths import REPO


def test_bundle_recipe_collects_every_runtime_dependency():
    """Each dependency in pyproject.toml is collected by the PyInstaller spec or left to a hook
    PyInstaller ships; none that the project dropped is still listed."""
    import ast
    import re
    import tomllib
    from importlib.metadata import packages_distributions

    spec = ast.parse((REPO / "packaging" / "research-desk.spec").read_text(encoding="utf-8"))
    lists = {node.targets[0].id: ast.literal_eval(node.value) for node in spec.body
             if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") in ("COLLECTED", "HOOKED")}
    bundled = set(lists["COLLECTED"]) | set(lists["HOOKED"])
    modules_of: dict[str, set[str]] = {}
    for module, dists in packages_distributions().items():
        for dist in dists:
            modules_of.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), set()).add(module)
    deps = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    needed = {}
    for dep in deps:
        name = re.sub(r"[-_.]+", "-", re.match(r"[A-Za-z0-9_.-]+", dep).group(0)).lower()
        needed[name] = modules_of.get(name, set()) - {"_yaml", "__editable__"}
    missing = {name: sorted(mods) for name, mods in needed.items() if mods and not mods & bundled}
    assert not missing, f"pyproject dependencies the bundle does not collect: {missing}"
    known = set().union(*needed.values()) | {"llama_cpp", "lance", "docx", "yaml"}
    stale = sorted(m for m in bundled if m not in known)
    assert not stale, f"the spec collects packages the project no longer uses: {stale}"
