#!/usr/bin/env python3
"""Writes the CRDs of this folder from the ones their projects published: each published YAML file
becomes <project>/<file>.json with every `description` replaced by a digest of its text
(`d:` and the first 12 hex digits of its SHA-256), so that the fixtures keep only the schemas'
structure while a description that changes still changes (crd-safe-upgrade's `description` and
`unhandled` rules see it). Usage: digest.py PUBLISHED.yaml... (run from this folder, with each
file under a folder named after its project)."""
import hashlib
import json
import pathlib
import sys

import yaml


def digest(value):
    if isinstance(value, dict):
        return {
            key: ("d:" + hashlib.sha256(item.encode()).hexdigest()[:12])
            if key == "description" and isinstance(item, str)
            else digest(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [digest(item) for item in value]
    return value


for name in sys.argv[1:]:
    path = pathlib.Path(name)
    crd = digest(yaml.safe_load(path.read_text()))
    out = pathlib.Path(path.parent.name) / (path.stem + ".json")
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(crd, indent=None, separators=(",", ":"), sort_keys=True) + "\n")
