#!/usr/bin/env python3
"""Derive object-validation's table of the built-in kinds' schemas from Kubernetes' OpenAPI v3.

usage: derive-builtin-schemas.py KUBECTL_VALIDATE [--rev REV] > builtin_schemas.tsv

KUBECTL_VALIDATE is a git clone or bare mirror of kubernetes-sigs/kubectl-validate (read from its
git objects at REV, default HEAD, so the output always matches the commit named in its header).
That repository vendors the OpenAPI v3 documents the Kubernetes API server publishes (the
Kubernetes project, Apache-2.0), one per group-version and minor release, under
pkg/openapiclient/builtins/1.MINOR/{api/v1.json,apis/GROUP/VERSION.json}. Python 3 standard
library and the git command line only.

What the table keeps of them, for every minor kept (below):
- every kind of a document's own group-version (its `x-kubernetes-group-version-kind`) whose
  schema has an ObjectMeta `metadata`: the objects the API server stores (lists, options and
  events left out);
- every definition reachable from those kinds through `$ref`, with only the keywords validation
  reads (KEEP below); descriptions, patch strategies and the other annotations are dropped. A
  keyword that is in neither KEEP nor DROP stops the script, so nothing is lost unseen.
- kubectl-validate's own corrections, as it applies them (see PATCHES below).

The minors are those the repository carries from OLDEST (1.24; --oldest) on. 1.23's documents
(OpenAPI v3 was alpha then) write every reference with its siblings beside a bare `$ref`, where
1.24 on write `allOf: [{$ref}]`: keeping them would add a quarter to the table for a release out
of support since 2023; a minor older than the oldest kept reads the oldest kept.

A definition is stored once for each run of consecutive minors that have it, as one tree merged
over those minors (see `merge`): a member equal in every minor once, a member that differs as
`{"@minors": [[FIRST, LAST, VALUE], ...]}`, VALUE from minor FIRST to LAST (and no member at a
minor no run holds). Reading a row for a minor selects each such member's VALUE (`select`); the
script checks that this gives back every minor's definition exactly.

Output (ASCII; `#` lines, then a blank line, then the rows sorted by key bytes, then FROM):
    KEY <TAB> FROM <TAB> TO <TAB> VALUE
  KEY is a definition's name (io.k8s.api.core.v1.PodSpec: the name `#/components/schemas/NAME`
  references use) with VALUE its merged schema as compact JSON (keys sorted), or a kind as
  APIVERSION/KIND (apps/v1/Deployment, v1/Pod) with VALUE the name of its definition; FROM and TO
  are the first and last minor (inclusive) the row holds for. The header names the source
  commit, paths and license, and the minors (`# minors: FIRST LAST`).

The output is deterministic: sorted, no timestamps, no local paths.
"""

import argparse
import collections
import copy
import json
import re
import subprocess
import sys

REPOSITORY = "kubernetes-sigs/kubectl-validate"
# The oldest minor kept (--oldest): see the docstring.
OLDEST = 24
BUILTINS = "pkg/openapiclient/builtins"
HAND_PATCHES = "pkg/openapiclient/patches"
SCHEMA_PREFIX = "#/components/schemas/"
OBJECT_META = SCHEMA_PREFIX + "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

# The keywords validation reads: kept.
KEEP = {
    "type", "format", "enum", "required", "nullable", "default", "properties", "items",
    "additionalProperties", "$ref", "allOf", "anyOf", "oneOf", "not", "minimum", "maximum",
    "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
    "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties",
    "x-kubernetes-int-or-string", "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource", "x-kubernetes-list-type", "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type", "x-kubernetes-validations",
}
# The keywords validation does not read: dropped (the group-version-kind goes to the kind rows).
DROP = {
    "description", "x-kubernetes-group-version-kind", "x-kubernetes-patch-strategy",
    "x-kubernetes-patch-merge-key", "x-kubernetes-unions", "example", "externalDocs", "title",
}
# Keywords whose value is a schema, a list of schemas or a map of schemas.
ONE = ("items", "additionalProperties", "not")
LISTS = ("allOf", "anyOf", "oneOf")
MAPS = ("properties",)

# PATCHES: kubectl-validate's corrections of the published documents, applied as it applies them.
# 1. Its validator applies `ApplySchemaPatches` (pkg/validator/schema_patcher.go) to every
#    definition of every built-in document it loads, whatever the version (validator.go calls it
#    with version 0, which every patch's range admits); its `patches_generated/` directories are
#    only the record of what these did to the 1.23-1.28 documents (written by
#    cmd/download-builtin-schemas, never loaded), so the script applies the transformations
#    themselves, in its order:
#    - AllowEmptyByteFormat: a `format: byte` string of a built-in type also accepts "" (Go's
#      []byte decodes it; a CRD's byte string does not): the format moves into
#      `allOf: [{anyOf: [{format: byte}, {maxLength: 0}]}]`;
#    - AnnotateNullable: the types whose Go MarshalJSON/UnmarshalJSON take null are nullable;
#    - IntOrStringDefinition: IntOrString is `x-kubernetes-int-or-string: true`, as the API
#      server's own structural schemas treat it;
#    - RemoveInvalidDefaults: the `{}` default published for a member of those custom-marshalled
#      types (and IntOrString) is dropped: it is not a value of the type.
# 2. Its hand-written overlay (pkg/openapiclient/patches/1.23/api/v1.json, a JSON merge patch):
#    Container requires `name` and `image`, ContainerPort's `protocol` is one of SCTP, TCP, UDP.
#    kubectl-validate applies it for --version 1.23 only; the documents of every minor lack both,
#    and the API server's Go validation refuses a port protocol outside those three at every
#    minor (k8s.io/kubernetes pkg/apis/core/validation, `supportedPortProtocols`, NotSupported)
#    and a container without an image, so the script applies it to every minor.
NULLABLE = {
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
}
# The member that marks a merged node (see merge): no published schema has a member of this name.
MINORS = "@minors"
# What `select` gives for a member absent at a minor.
ABSENT = object()
INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
INVALID_DEFAULT = NULLABLE | {INT_OR_STRING}


def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], check=True, stdout=subprocess.PIPE).stdout


def subschemas(schema):
    """The direct subschemas of a schema, as kubectl-validate's visitor walks them."""
    for key in MAPS:
        yield from (schema.get(key) or {}).values()
    for key in LISTS:
        yield from schema.get(key) or []
    for key in ONE:
        if isinstance(schema.get(key), dict):
            yield schema[key]


def postorder(schema, visit):
    """Applies `visit` to every subschema, children first; `visit` returns the replacement."""
    for key in MAPS:
        for name, sub in list((schema.get(key) or {}).items()):
            schema[key][name] = postorder(sub, visit)
    for key in LISTS:
        if key in schema:
            schema[key] = [postorder(sub, visit) for sub in schema[key]]
    for key in ONE:
        if isinstance(schema.get(key), dict):
            schema[key] = postorder(schema[key], visit)
    return visit(schema)


def allow_empty_byte_format(schema):
    if schema.get("format") == "byte" and schema.get("type") == "string":
        schema.setdefault("allOf", []).append({"anyOf": [{"format": "byte"}, {"maxLength": 0}]})
        del schema["format"]
    return schema


def annotate_nullable(schema):
    schema["nullable"] = True
    return schema


def remove_invalid_default(schema):
    if schema.get("default") == {}:
        refs = [schema.get("$ref", "")] + [sub.get("$ref", "") for sub in schema.get("allOf", [])]
        if any(ref.rsplit("/", 1)[-1] in INVALID_DEFAULT for ref in refs if ref):
            del schema["default"]
    return schema


def kubectl_validate_patches(name, schema):
    """kubectl-validate's ApplySchemaPatches on one definition of a built-in group-version."""
    schema = postorder(schema, allow_empty_byte_format)
    if name in NULLABLE:
        schema = postorder(schema, annotate_nullable)
    if name == INT_OR_STRING:
        schema = {"x-kubernetes-int-or-string": True}
    return postorder(schema, remove_invalid_default)


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def strip(schema, where):
    """The schema with only the KEEP keywords, recursively; unknown keywords stop the script."""
    out = {}
    for key, value in schema.items():
        if key in DROP:
            continue
        if key == MINORS:
            sys.exit(f"derive-builtin-schemas: a member named {MINORS} at {where}")
        if key not in KEEP:
            sys.exit(f"derive-builtin-schemas: unknown keyword {key!r} at {where}")
        if key in MAPS:
            if MINORS in value:
                sys.exit(f"derive-builtin-schemas: a member named {MINORS} at {where}.{key}")
            value = {k: strip(v, f"{where}.{key}.{k}") for k, v in value.items()}
        elif key in LISTS:
            value = [strip(v, f"{where}.{key}[{i}]") for i, v in enumerate(value)]
        elif key in ONE and isinstance(value, dict):
            value = strip(value, f"{where}.{key}")
        out[key] = value
    return out


def refs(schema):
    """Every definition a schema references."""
    ref = schema.get("$ref")
    if ref:
        if not ref.startswith(SCHEMA_PREFIX):
            sys.exit(f"derive-builtin-schemas: unexpected reference {ref!r}")
        yield ref[len(SCHEMA_PREFIX):]
    for sub in subschemas(schema):
        yield from refs(sub)


def is_stored_object(schema):
    """Whether a kind's schema has an ObjectMeta `metadata` (directly or as allOf: [{$ref}])."""
    meta = (schema.get("properties") or {}).get("metadata") or {}
    return meta.get("$ref") == OBJECT_META or any(
        sub.get("$ref") == OBJECT_META for sub in meta.get("allOf", []))


def majority(minor, name, texts):
    """The text most documents of a minor give a definition. They differ only where
    kubectl-validate's download copied a document from another release (apiregistration.k8s.io/v1
    before 1.27 is 1.27's, for kubernetes/kubernetes#118879): the shared definitions (ObjectMeta...)
    are then the release's own, as the other documents give them."""
    (text, count), *rest = texts.most_common()
    if rest and rest[0][1] == count:
        sys.exit(f"derive-builtin-schemas: 1.{minor}: the documents disagree on {name}")
    return text


def canonical(value):
    """Compact JSON, keys sorted, ASCII (so the reader may cut the table at any byte): what the
    table stores, and how values are compared (Python's `==` holds 1 and true equal)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def presence(minors, by_minor):
    """The runs of consecutive minors `by_minor` has, each a list of (minor, value)."""
    out = []
    for minor in minors:
        if minor not in by_minor:
            continue
        if out and out[-1][-1][0] == minor - 1:
            out[-1].append((minor, by_minor[minor]))
        else:
            out.append([(minor, by_minor[minor])])
    return out


def runs(present):
    """[[FIRST, LAST, VALUE]] of the consecutive minors of `present` with equal values."""
    out = []
    for minor, value in present:
        if out and out[-1][1] == minor - 1 and canonical(out[-1][2]) == canonical(value):
            out[-1][1] = minor
        else:
            out.append([minor, minor, value])
    return out


def merge(present):
    """One tree for the values a node has in consecutive minors (`present`: (minor, value), each
    minor present): the value where they are all equal; where they are all objects, an object
    whose members are merged in turn; else (and for a member some of the minors lack)
    `{"@minors": [[FIRST, LAST, VALUE], ...]}`: VALUE (whole) from minor FIRST to LAST, and for a
    member, no member at a minor no run holds."""
    first = canonical(present[0][1])
    if all(canonical(value) == first for _, value in present):
        return present[0][1]
    if all(isinstance(value, dict) for _, value in present):
        out = {}
        for key in sorted({key for _, value in present for key in value}):
            values = [(minor, value[key]) for minor, value in present if key in value]
            out[key] = merge(values) if len(values) == len(present) else {MINORS: runs(values)}
        return out
    return {MINORS: runs(present)}


def select(tree, minor):
    """The value a merged tree has at `minor` (ABSENT: none); what the Rust reader does."""
    if isinstance(tree, dict):
        if list(tree) == [MINORS]:
            for first, last, value in tree[MINORS]:
                if first <= minor <= last:
                    return value
            return ABSENT
        out = {}
        for key, value in tree.items():
            value = select(value, minor)
            if value is not ABSENT:
                out[key] = value
        return out
    return tree


def documents(repo, rev, minor):
    """(apiVersion, path) of every document of a minor."""
    root = f"{BUILTINS}/1.{minor}/"
    for path in git(repo, "ls-tree", "-r", "--name-only", rev, root).decode().split():
        rest = path[len(root):]
        m = re.fullmatch(r"api/(v[^/]+)\.json|apis/([^/]+)/(v[^/]+)\.json", rest)
        if not m:
            sys.exit(f"derive-builtin-schemas: unexpected document {path}")
        yield (m.group(1) or f"{m.group(2)}/{m.group(3)}"), path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repo")
    parser.add_argument("--rev", default="HEAD")
    parser.add_argument("--oldest", type=int, default=OLDEST)
    args = parser.parse_args()
    commit = git(args.repo, "rev-parse", args.rev + "^{commit}").decode().strip()
    date = git(args.repo, "show", "-s", "--format=%cs", commit).decode().strip()
    listing = git(args.repo, "ls-tree", "--name-only", commit, BUILTINS + "/").decode().split()
    minors = sorted(int(path.rsplit("/", 1)[-1][len("1."):]) for path in listing)
    minors = [minor for minor in minors if minor >= args.oldest]
    if not minors or minors != list(range(minors[0], minors[-1] + 1)):
        sys.exit(f"derive-builtin-schemas: the minors {minors} are not consecutive")
    hand = json.loads(git(args.repo, "show", f"{commit}:{HAND_PATCHES}/1.23/api/v1.json"))
    hand = hand["components"]["schemas"]

    # name -> minor -> compact JSON; (apiVersion, kind) -> minor -> definition name
    definitions, kinds = {}, {}
    for minor in minors:
        schemas = {}
        roots = {}
        for api_version, path in documents(args.repo, commit, minor):
            doc = json.loads(git(args.repo, "show", f"{commit}:{path}"))
            group, _, version = api_version.rpartition("/")
            for name, schema in doc["components"]["schemas"].items():
                for gvk in schema.get("x-kubernetes-group-version-kind", []):
                    if (gvk["group"], gvk["version"]) == (group, version) and is_stored_object(schema):
                        key = (api_version, gvk["kind"])
                        if roots.setdefault(key, name) != name:
                            sys.exit(f"derive-builtin-schemas: 1.{minor}: {key} has two schemas")
                schema = kubectl_validate_patches(name, schema)
                if name in hand:
                    schema = merge_patch(schema, hand[name])
                text = canonical(strip(schema, name))
                schemas.setdefault(name, collections.Counter())[text] += 1
        # Only what the kinds reach.
        reached, todo = set(), sorted(set(roots.values()))
        while todo:
            name = todo.pop()
            if name in reached:
                continue
            if name not in schemas:
                sys.exit(f"derive-builtin-schemas: 1.{minor}: {name} is referenced but not defined")
            schemas[name] = majority(minor, name, schemas[name])
            reached.add(name)
            todo.extend(refs(json.loads(schemas[name])))
        for name in reached:
            definitions.setdefault(name, {})[minor] = schemas[name]
        for key, name in roots.items():
            kinds.setdefault(key, {})[minor] = name

    rows = []
    for (api_version, kind), by_minor in kinds.items():
        for first, last, name in runs(sorted(by_minor.items())):
            rows.append((f"{api_version}/{kind}", first, last, name))
    for name, by_minor in definitions.items():
        for present in presence(minors, by_minor):
            present = [(minor, json.loads(text)) for minor, text in present]
            tree = merge(present)
            for minor, value in present:
                if canonical(select(tree, minor)) != canonical(value):
                    sys.exit(f"derive-builtin-schemas: 1.{minor}: {name} does not round-trip")
            rows.append((name, present[0][0], present[-1][0], canonical(tree)))
    rows.sort(key=lambda row: (row[0].encode(), row[1]))

    out = sys.stdout
    out.write("# builtin_schemas.tsv: the built-in kinds' schemas, from the OpenAPI v3 documents the\n")
    out.write("# Kubernetes API server publishes (the Kubernetes project, Apache-2.0), as vendored by\n")
    out.write(f"# {REPOSITORY} {commit} {date}\n")
    out.write(f"# at {BUILTINS}/1.MINOR/{{api/v1.json,apis/GROUP/VERSION.json}}, with its corrections\n")
    out.write("# (pkg/validator/schema_patcher.go; pkg/openapiclient/patches/1.23/api/v1.json at every minor).\n")
    out.write("# Written by tools/derive-builtin-schemas.py (make builtin-schemas), which describes it.\n")
    out.write("# Rows: KEY FROM TO VALUE (tab separated), sorted by KEY bytes then FROM; a member that\n")
    out.write("# differs between the minors of a row is {\"@minors\":[[FIRST,LAST,VALUE],...]}.\n")
    out.write(f"# minors: {minors[0]} {minors[-1]}\n")
    out.write("\n")
    for key, first, last, value in rows:
        assert "\t" not in value and "\n" not in value
        out.write(f"{key}\t{first}\t{last}\t{value}\n")


if __name__ == "__main__":
    main()
