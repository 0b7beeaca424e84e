#!/usr/bin/env python3
"""Checks scenarios/schema.json against the scenario files: every valid scenario must pass the
schema (editors would otherwise flag good files), and the schema must itself be a valid draft
2020-12 schema. Needs PyYAML and jsonschema; exits 77 (skipped) without them."""
import json
import pathlib
import sys

try:
    import jsonschema
    import yaml
except ImportError as missing:  # pragma: no cover
    print(f"skipped: {missing}")
    sys.exit(77)


def string_keys(node):
    """The document as JSON sees it: every mapping key a string (`messages`, `device_memory`)."""
    if isinstance(node, dict):
        return {str(k): string_keys(v) for k, v in node.items()}
    if isinstance(node, list):
        return [string_keys(v) for v in node]
    return node


def main() -> int:
    scenarios = pathlib.Path(sys.argv[1])
    schema = json.loads((scenarios / "schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    failures = 0
    files = sorted(p for p in scenarios.rglob("*") if p.suffix in (".yaml", ".yml"))
    for path in files:
        document = yaml.safe_load(path.read_text())
        # YAML keys like `1:` load as ints; JSON (and the editor's view) has string keys.
        document = string_keys(document)
        for error in validator.iter_errors(document):
            failures += 1
            where = "/".join(str(p) for p in error.absolute_path)
            print(f"{path}: {where}: {error.message}")
    print(f"{len(files)} scenario files checked against the schema, {failures} problems")
    return 1 if failures or not files else 0


if __name__ == "__main__":
    sys.exit(main())
