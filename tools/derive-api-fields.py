#!/usr/bin/env python3
"""Derive sync-drift's tables of how the API server writes the built-in Kubernetes API types back.

usage: derive-api-fields.py [options] API APIMACHINERY APIEXTENSIONS [--aggregator AGGREGATOR]
  API, APIMACHINERY, APIEXTENSIONS and AGGREGATOR are k8s.io/api, k8s.io/apimachinery,
  k8s.io/apiextensions-apiserver and k8s.io/kube-aggregator: each a bare git directory or a git
  checkout (read from its git objects at --*-rev, default HEAD, so the output always matches the
  commit named in the header), or a plain source directory (commit "unknown").
  --fields FILE, --kinds FILE and --statuses FILE write the three tables (`make api-fields`
  writes them to api_fields.tsv, api_kinds.tsv and api_status.tsv beside this script); without them the fields table goes to
  stdout. --all prints, instead of the trimmed fields table, every struct of the parsed packages
  with the audit columns zero_out, go_type, via and json_tag.

The API server decodes a manifest into the Go type of its kind and writes it back with Go's
encoding/json (apimachinery's runtime/serializer/json; sigs.k8s.io/json only decodes). What comes
back depends on each field's json tag and Go type, which this script reads from the Go sources
(Python 3 standard library and the git command line only; its own Go tokenizer and declaration
parser, encoding/json's field rules: embedded structs flattened with Go's dominance rules,
`json:"-"` and unexported fields left out; //go:build evaluated for linux/amd64/go1.26):
- omitempty drops false, 0, "", a nil pointer or interface, and an empty list, map or byte string.
  A struct is never empty, so a struct member (and Quantity, Time, IntOrString, RawExtension...,
  structs with their own MarshalJSON) is always written, even with omitempty. A pointer is empty
  only when nil: `replicas: 0` and `securityContext: {}` are kept.
- omitzero drops the zero value (its IsZero method when it has one); only
  ObjectMeta.creationTimestamp has it (from Kubernetes 1.34 on).
- A JSON null (or a missing key) decodes to the zero value, written back as: nothing (omitempty
  scalars, pointers, lists, maps; omitzero), "", 0 or false (other scalars), {...} (structs),
  "0" (Quantity), 0 (IntOrString), "0s" (Duration), or null: non-omitempty pointers, lists and maps,
  Time and MicroTime without omitzero, RawExtension, FieldsV1 and apiextensions' JSON, whose
  MarshalJSON writes null for their zero value. keeps_null marks those.

apiextensions/v1 (CustomResourceDefinition) has its own MarshalJSON/UnmarshalJSON (marshal.go) for
  JSON                          verbatim JSON, null when empty (a member `default: null` is a nil
                                *JSON, dropped): leaf free;
  JSONSchemaPropsOrBool         a JSONSchemaProps object or true/false; `{}` is written back as
                                `{}`, its zero value as false: leaf schema-or-bool;
  JSONSchemaPropsOrArray        a JSONSchemaProps object or a list of them; an empty list `[]`
                                (or anything that is neither) is written back as null, even
                                behind `items`' omitempty pointer: leaf schema-or-array;
  JSONSchemaPropsOrStringArray  a JSONSchemaProps object or a list of strings; `[]` is written
                                back as null: leaf schema-or-strings.
The target of the schema-or-* leaves is JSONSchemaProps, which itself has no MarshalJSON.

Tables (tab separated; `#` lines name every source commit, then one line of column names):

api_kinds.tsv: every kind registered in a register.go (scheme.AddKnownTypes) whose type has an
  ObjectMeta `metadata`, except *List kinds and kinds not served: alpha and beta kinds whose
  APILifecycleRemoved (zz_generated.prerelease-lifecycle.go) is at most the release (--kubernetes
  1.MINOR, by default the newest APILifecycleIntroduced: the release in the making on a master
  commit), and the few of NOT_SERVED below; the core group is "".
    group  version  kind  type (package.Struct, whose name is the kind)
    scope  Cluster when the type's doc comment has the client generator's tag
           `+genclient:nonNamespaced` (the API server then clears `metadata.namespace` on create
           and update), else Namespaced

api_status.tsv: the kinds of api_kinds.tsv whose own `status` type's zero value holds a struct
  member (which encoding/json always writes), with the JSON of that zero value: every stored
  object of the kind holds at least those objects in its status (Service's `loadBalancer: {}`).
    group  version  kind  status (JSON)

api_fields.tsv: one row per JSON member, in declaration order, of each struct reachable from the
  types of api_kinds.tsv, except through a kind's own top-level `status` (its `status` row then has
  leaf status and no target; a status type reachable otherwise, e.g. PersistentVolumeClaim's
  through StatefulSet's volumeClaimTemplates, is kept). The structs of the kinds of STATUS_LISTED
  (CustomResourceDefinition) are listed all the same, for crd-schema-fields, which checks every
  key of a CRD manifest, its status included; their kind's `status` row still has leaf status.
  A struct without JSON members has no rows: it is only named as a target.
    package    e.g. core/v1, meta/v1, apiextensions/v1, apiregistration/v1
    struct     Go struct name
    field      JSON member name
    omitempty  1 if the json tag has omitempty
    omitzero   1 if the json tag has omitzero
    form       value | pointer | list | map | map-of-lists (a map of lists of the leaf: only
               map[string][]string, the `extra` of user info; there are no lists of lists)
    leaf       what the form holds: object (target is its struct) | string | bool | int | float |
               bytes (base64 string) | quantity | time | microtime | duration | intorstring |
               free (verbatim JSON: RawExtension, apiextensions JSON, interface{}) | fieldsv1 |
               schema-or-bool | schema-or-array | schema-or-strings (target JSONSchemaProps) |
               status (a kind's own status, not listed)
    target     package.Struct of object and schema-or-* leaves, else -
    keeps_null 1 if the member is written as null when null (or missing) on input

The output is deterministic: sorted or in source order, no timestamps, no local paths.
"""

import argparse
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from typing import Dict, List, Optional, Tuple

API_MODULE = "k8s.io/api"
AM_MODULE = "k8s.io/apimachinery"
APIEXT_MODULE = "k8s.io/apiextensions-apiserver"
AGG_MODULE = "k8s.io/kube-aggregator"

# apimachinery packages that are parsed: directory -> short package id.
AM_PACKAGES = {
    "pkg/apis/meta/v1": "meta/v1",
    "pkg/api/resource": "apimachinery/resource",
    "pkg/util/intstr": "apimachinery/intstr",
    "pkg/runtime": "apimachinery/runtime",
    "pkg/types": "apimachinery/types",
}
# Packages of the other repositories that are parsed: directory -> short package id.
APIEXT_PACKAGES = {"pkg/apis/apiextensions/v1": "apiextensions/v1"}
AGG_PACKAGES = {"pkg/apis/apiregistration/v1": "apiregistration/v1"}
# Packages whose structs get rows besides the k8s.io/api ones.
EXTRA_EMIT = {"meta/v1", "apiextensions/v1", "apiregistration/v1"}

# Types whose JSON form is produced by their own MarshalJSON method, and their class.  Any other
# type found with a MarshalJSON method is "marshaler", which the trimmed table refuses.
MARSHALER_CLASS = {
    "apimachinery/resource.Quantity": "quantity",
    "apimachinery/intstr.IntOrString": "intorstring",
    "apimachinery/runtime.RawExtension": "rawextension",
    "apimachinery/runtime.Unknown": "marshaler",
    "meta/v1.Time": "time",
    "meta/v1.MicroTime": "microtime",
    "meta/v1.Duration": "duration",
    "meta/v1.FieldsV1": "fieldsv1",
    "apiextensions/v1.JSON": "json",
    "apiextensions/v1.JSONSchemaPropsOrBool": "schema-or-bool",
    "apiextensions/v1.JSONSchemaPropsOrArray": "schema-or-array",
    "apiextensions/v1.JSONSchemaPropsOrStringArray": "schema-or-strings",
}
# The object alternative of the schema-or-* classes.
SCHEMA_PROPS = "apiextensions/v1.JSONSchemaProps"
# Kinds whose own status types are listed too (their `status` row keeps leaf status, so sync-drift
# still skips the status): crd-schema-fields checks every key of a CRD manifest, status included.
STATUS_LISTED = {"apiextensions/v1.CustomResourceDefinition"}

# Standard-library named types that can appear in the parsed packages.
STDLIB_CLASS = {
    "time.Time": "time",
    "time.Duration": "int",
    "encoding/json.RawMessage": "bytes",
}

BUILTIN_CLASS = {
    "string": "string",
    "bool": "bool",
    "int": "int", "int8": "int", "int16": "int", "int32": "int", "int64": "int",
    "uint": "int", "uint8": "int", "uint16": "int", "uint32": "int",
    "uint64": "int", "uintptr": "int", "byte": "int", "rune": "int",
    "float32": "float", "float64": "float",
    "complex64": "complex", "complex128": "complex",
    "error": "interface", "any": "interface",
}

# Build constraints: tags considered set when evaluating //go:build lines.
# Go 1.26 (k8s.io/api go.mod says go 1.26.0), linux/amd64, gc, no custom tags.
GO_MINOR = 26
BUILD_TAGS = {"linux", "amd64", "unix", "gc", "cgo"} | {
    "go1.%d" % i for i in range(1, GO_MINOR + 1)}

# JSON written by encoding/json for the Go zero value of each class (structs are computed member
# by member).  Marshaler classes: what their MarshalJSON returns for the zero value
# (meta/v1 time.go, micro_time.go, duration.go, helpers.go; resource/quantity.go; intstr.go;
# runtime/extension.go; apiextensions/v1 marshal.go).
ZERO_JSON = {
    "string": '""', "bool": "false", "int": "0", "float": "0",
    "pointer": "null", "slice": "null", "map": "null", "bytes": "null",
    "interface": "null", "func": "null", "chan": "null",
    "time": "null", "microtime": "null", "fieldsv1": "null",
    "rawextension": "null", "duration": '"0s"', "quantity": '"0"',
    "intorstring": "0", "json": "null", "schema-or-bool": "false",
    "schema-or-array": "null", "schema-or-strings": "null",
    "marshaler": "?", "external": "?",
}
# Classes whose zero value is "empty" for omitempty (encoding/json isEmptyValue: false, 0, nil
# pointer/interface, len 0 array/slice/map/string).
OMITEMPTY_CLASSES = {"string", "bool", "int", "float", "pointer", "slice",
                     "map", "bytes", "interface"}
OMITTED = "<omitted>"

# Leaf of the trimmed table for each class of the innermost element.
LEAF_OF_CLASS = {
    "struct": "object", "string": "string", "bool": "bool", "int": "int",
    "float": "float", "bytes": "bytes", "quantity": "quantity", "time": "time",
    "microtime": "microtime", "duration": "duration",
    "intorstring": "intorstring", "rawextension": "free", "json": "free",
    "interface": "free", "fieldsv1": "fieldsv1",
    "schema-or-bool": "schema-or-bool", "schema-or-array": "schema-or-array",
    "schema-or-strings": "schema-or-strings",
}
# form and leaf class from a shape: X, *X, []X, map[string]X, map[string][]X.
SHAPE_RE = re.compile(r"^(?P<form>\*|\[\]|map\[string\]\[\]|map\[string\])?(?P<leaf>[a-z0-9-]+)$")
FORM_OF_PREFIX = {None: "value", "*": "pointer", "[]": "list",
                  "map[string]": "map", "map[string][]": "map-of-lists"}

COLUMNS_FIELDS = ["package", "struct", "field", "omitempty", "omitzero",
                  "form", "leaf", "target", "keeps_null"]
COLUMNS_AUDIT = COLUMNS_FIELDS + ["zero_out", "go_type", "via", "json_tag"]
COLUMNS_KINDS = ["group", "version", "kind", "type", "scope"]
COLUMNS_STATUSES = ["group", "version", "kind", "status"]


def die(msg):
    sys.stderr.write("derive-api-fields.py: error: %s\n" % msg)
    sys.exit(1)


def warn(msg):
    sys.stderr.write("derive-api-fields.py: warning: %s\n" % msg)


# ---------------------------------------------------------------------------
# Source access
# ---------------------------------------------------------------------------

class Source:
    """Files of one repository: git objects at a revision, or a directory."""

    def __init__(self, path: str, rev: str):
        self.path = path
        self.git_dir = None
        if os.path.isfile(os.path.join(path, "HEAD")) and \
                os.path.isdir(os.path.join(path, "objects")):
            self.git_dir = path
        elif os.path.exists(os.path.join(path, ".git")):
            self.git_dir = os.path.join(path, ".git")
        elif not os.path.isdir(path):
            die("%s: not a directory" % path)
        self.rev = rev
        self.commit = "unknown"
        self.commit_date = ""
        self.tags: List[str] = []
        self._files: Optional[List[str]] = None
        self._cache: Dict[str, str] = {}
        if self.git_dir:
            self.commit = self._git("rev-parse", "--verify",
                                    rev + "^{commit}").strip()
            self.commit_date = self._git("show", "-s", "--format=%cI",
                                         self.commit).strip()
            self.tags = sorted(
                t for t in self._git("tag", "--points-at",
                                     self.commit).split() if t)

    def _git(self, *args) -> str:
        try:
            out = subprocess.run(["git", "--git-dir=" + self.git_dir] +
                                 list(args), check=True,
                                 stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        except subprocess.CalledProcessError as e:
            die("git %s failed in %s: %s" % (" ".join(args), self.git_dir,
                                             e.stderr.decode(errors="replace")
                                             .strip()))
        return out.stdout.decode("utf-8")

    def files(self) -> List[str]:
        if self._files is None:
            if self.git_dir:
                out = self._git("ls-tree", "-r", "-z", "--name-only",
                                self.commit)
                self._files = sorted(p for p in out.split("\0") if p)
            else:
                res = []
                for root, dirs, names in os.walk(self.path):
                    dirs[:] = [d for d in dirs if not d.startswith(".")]
                    for n in names:
                        res.append(os.path.relpath(os.path.join(root, n),
                                                   self.path)
                                   .replace(os.sep, "/"))
                self._files = sorted(res)
        return self._files

    def read_many(self, paths: List[str]) -> None:
        """Load many files at once (one `git cat-file --batch`)."""
        todo = [p for p in paths if p not in self._cache]
        if not todo:
            return
        if not self.git_dir:
            for p in todo:
                with open(os.path.join(self.path, p), encoding="utf-8") as f:
                    self._cache[p] = f.read()
            return
        req = "".join("%s:%s\n" % (self.commit, p) for p in todo)
        out = subprocess.run(["git", "--git-dir=" + self.git_dir, "cat-file",
                              "--batch"], input=req.encode("utf-8"),
                             stdout=subprocess.PIPE, check=True).stdout
        pos = 0
        for p in todo:
            nl = out.index(b"\n", pos)
            header = out[pos:nl].decode()
            parts = header.split()
            if len(parts) < 3 or parts[1] != "blob":
                die("cannot read %s at %s: %s" % (p, self.commit, header))
            size = int(parts[2])
            self._cache[p] = out[nl + 1:nl + 1 + size].decode("utf-8")
            pos = nl + 1 + size + 1

    def read(self, path: str) -> str:
        self.read_many([path])
        return self._cache[path]

    def exists(self, path: str) -> bool:
        return path in set(self.files())


# ---------------------------------------------------------------------------
# Go tokenizer (with automatic semicolon insertion, comments kept apart)
# ---------------------------------------------------------------------------

TOKEN_RE = re.compile(r"""
  (?P<ws>[ \t\r\f]+)
| (?P<nl>\n)
| (?P<lcomment>//[^\n]*)
| (?P<bcomment>/\*.*?\*/)
| (?P<raw>`[^`]*`)
| (?P<str>"(?:[^"\\\n]|\\.)*")
| (?P<rune>'(?:[^'\\\n]|\\.)*')
| (?P<num>\.?[0-9][0-9a-zA-Z_.]*(?:[eEpP][+-][0-9a-fA-F_]+)?)
| (?P<ident>[^\W\d]\w*)
| (?P<op>\.\.\.|<-|&\^=?|<<=?|>>=?|&&|\|\||\+\+|--|:=|[-+*/%&|^<>=!]=|[-+*/%&|^<>=!~.,;:()\[\]{}])
""", re.VERBOSE | re.DOTALL)

GO_KEYWORDS = {
    "break", "case", "chan", "const", "continue", "default", "defer", "else",
    "fallthrough", "for", "func", "go", "goto", "if", "import", "interface",
    "map", "package", "range", "return", "select", "struct", "switch", "type",
    "var"}
# Go spec, semicolons: a newline after one of these ends a statement.
SEMI_KEYWORDS = {"break", "continue", "fallthrough", "return"}
SEMI_OPS = {"++", "--", ")", "]", "}"}


@dataclass
class Tok:
    kind: str       # ident, num, str, raw, rune, op, eof
    val: str
    line: int
    pre: List[str]  # comments between the previous token and this one


def tokenize(src: str, fname: str) -> List[Tok]:
    toks: List[Tok] = []
    pending: List[str] = []
    line = 1
    pos = 0
    last = None  # last significant token

    def needs_semi():
        if last is None:
            return False
        if last.kind in ("num", "str", "raw", "rune"):
            return True
        if last.kind == "ident":
            return last.val not in GO_KEYWORDS or last.val in SEMI_KEYWORDS
        return last.kind == "op" and last.val in SEMI_OPS

    def newline():
        nonlocal last
        if needs_semi():
            t = Tok("op", ";", line, pending[:])
            pending.clear()
            toks.append(t)
            last = None

    n = len(src)
    while pos < n:
        m = TOKEN_RE.match(src, pos)
        if not m:
            die("%s:%d: cannot tokenize near %r" % (fname, line,
                                                     src[pos:pos + 20]))
        kind = m.lastgroup
        text = m.group()
        pos = m.end()
        if kind == "ws":
            continue
        if kind == "nl":
            newline()
            line += 1
            continue
        if kind in ("lcomment", "bcomment"):
            pending.append(text)
            if kind == "bcomment" and "\n" in text:
                newline()
                line += text.count("\n")
            continue
        t = Tok(kind, text, line, pending[:])
        pending.clear()
        toks.append(t)
        last = t
        if kind == "raw":
            line += text.count("\n")
    newline()
    toks.append(Tok("eof", "", line, pending[:]))
    return toks


def build_ok(src: str) -> bool:
    """Evaluate the file's //go:build constraint (if any) against BUILD_TAGS."""
    for ln in src.splitlines():
        s = ln.strip()
        if s.startswith("//go:build "):
            expr = s[len("//go:build "):]
            return eval_build_expr(expr)
        if s.startswith("package "):
            break
    return True


def eval_build_expr(expr: str) -> bool:
    toks = re.findall(r"\(|\)|!|&&|\|\||[\w.]+", expr)
    pos = 0

    def parse_or():
        nonlocal pos
        v = parse_and()
        while pos < len(toks) and toks[pos] == "||":
            pos += 1
            v = parse_and() or v
        return v

    def parse_and():
        nonlocal pos
        v = parse_not()
        while pos < len(toks) and toks[pos] == "&&":
            pos += 1
            v = parse_not() and v
        return v

    def parse_not():
        nonlocal pos
        if toks[pos] == "!":
            pos += 1
            return not parse_not()
        if toks[pos] == "(":
            pos += 1
            v = parse_or()
            pos += 1  # ')'
            return v
        t = toks[pos]
        pos += 1
        return t in BUILD_TAGS

    return parse_or()


# ---------------------------------------------------------------------------
# Go declarations parser (types, imports, method names)
# ---------------------------------------------------------------------------

@dataclass
class TypeNode:
    kind: str                       # named ptr slice array map struct interface func chan
    pkg: Optional[str] = None       # named: import alias (None = local/builtin)
    name: Optional[str] = None      # named: identifier
    elem: Optional["TypeNode"] = None
    key: Optional["TypeNode"] = None
    length: Optional[str] = None
    fields: Optional[List["GoField"]] = None


@dataclass
class GoField:
    names: List[str]                # empty for an embedded field
    type: TypeNode
    tag: str
    doc: List[str]
    line: int

    @property
    def embedded(self):
        return not self.names


@dataclass
class TypeDecl:
    pkg: str            # short package id
    name: str
    type: TypeNode
    alias: bool
    doc: List[str]
    file: str
    line: int
    imports: Dict[str, str]  # alias -> import path, of the declaring file


class ParseError(Exception):
    pass


class GoFileParser:
    def __init__(self, toks: List[Tok], fname: str):
        self.t = toks
        self.i = 0
        self.fname = fname
        self.package = None
        self.imports: Dict[str, str] = {}
        self.types: List[Tuple[str, TypeNode, bool, List[str], int]] = []
        self.methods: List[Tuple[str, str, bool]] = []  # (recv type, name, ptr)

    # -- helpers
    def peek(self, k=0) -> Tok:
        return self.t[min(self.i + k, len(self.t) - 1)]

    def next(self) -> Tok:
        tok = self.t[self.i]
        self.i += 1
        return tok

    def is_op(self, v, k=0):
        tok = self.peek(k)
        return tok.kind == "op" and tok.val == v

    def expect_op(self, v):
        tok = self.next()
        if tok.kind != "op" or tok.val != v:
            raise ParseError("%s:%d: expected %r, got %r" %
                             (self.fname, tok.line, v, tok.val))
        return tok

    def expect_ident(self):
        tok = self.next()
        if tok.kind != "ident":
            raise ParseError("%s:%d: expected identifier, got %r" %
                             (self.fname, tok.line, tok.val))
        return tok

    def skip_balanced(self):
        """Skip a bracketed group starting at the current opening bracket."""
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = 0
        while True:
            tok = self.next()
            if tok.kind == "eof":
                raise ParseError("%s: unbalanced brackets" % self.fname)
            if tok.kind == "op":
                if tok.val in pairs:
                    depth += 1
                elif tok.val in (")", "]", "}"):
                    depth -= 1
                    if depth == 0:
                        return

    def skip_decl(self):
        depth = 0
        while True:
            tok = self.peek()
            if tok.kind == "eof":
                return
            if tok.kind == "op":
                if tok.val in "([{":
                    depth += 1
                elif tok.val in ")]}":
                    depth -= 1
                elif tok.val == ";" and depth == 0:
                    self.next()
                    return
            self.next()

    # -- file
    def parse(self):
        tok = self.next()
        if tok.kind != "ident" or tok.val != "package":
            raise ParseError("%s: no package clause" % self.fname)
        self.package = self.expect_ident().val
        self.expect_op(";")
        while self.peek().kind != "eof":
            tok = self.peek()
            if tok.kind == "op" and tok.val == ";":
                self.next()
            elif tok.kind == "ident" and tok.val == "import":
                self.next()
                self.parse_import()
            elif tok.kind == "ident" and tok.val == "type":
                doc = tok.pre
                self.next()
                if self.is_op("("):
                    self.next()
                    while not self.is_op(")"):
                        if self.is_op(";"):
                            self.next()
                            continue
                        self.parse_type_spec(self.peek().pre or doc)
                    self.next()
                else:
                    self.parse_type_spec(doc)
            elif tok.kind == "ident" and tok.val == "func":
                self.next()
                self.parse_func_head()
                self.skip_decl()
            else:
                self.skip_decl()

    def parse_import(self):
        def spec():
            alias = None
            if self.peek().kind == "ident" or self.is_op("."):
                alias = self.next().val
            tok = self.next()
            if tok.kind not in ("str", "raw"):
                raise ParseError("%s:%d: bad import" % (self.fname, tok.line))
            path = tok.val[1:-1]
            if alias is None:
                alias = default_import_name(path)
            if alias not in ("_", "."):
                self.imports[alias] = path
        if self.is_op("("):
            self.next()
            while not self.is_op(")"):
                if self.is_op(";"):
                    self.next()
                    continue
                spec()
            self.next()
        else:
            spec()

    def parse_type_spec(self, doc):
        name_tok = self.expect_ident()
        alias = False
        if self.is_op("["):
            # generic type parameters vs array type: `[N]T` has a `]` after
            # one identifier or literal.
            if not (self.is_op("]", 1) or self.is_op("]", 2)):
                warn("%s:%d: generic type %s skipped" %
                     (self.fname, name_tok.line, name_tok.val))
                self.skip_decl()
                return
        if self.is_op("="):
            self.next()
            alias = True
        typ = self.parse_type()
        self.types.append((name_tok.val, typ, alias, doc, name_tok.line))
        if self.is_op(";"):
            self.next()

    def parse_func_head(self):
        if not self.is_op("("):
            return
        start = self.i
        self.skip_balanced()
        recv = [t for t in self.t[start + 1:self.i - 1]]
        name = self.peek()
        if name.kind != "ident":
            return
        # receiver: [ident] [*] TypeName [ [params] ]
        ptr = any(t.kind == "op" and t.val == "*" for t in recv)
        idents = []
        for t in recv:
            if t.kind == "op" and t.val == "[":
                break
            if t.kind == "ident":
                idents.append(t.val)
        if idents:
            self.methods.append((idents[-1], name.val, ptr))

    # -- types
    def parse_type(self) -> TypeNode:
        tok = self.peek()
        if tok.kind == "op":
            if tok.val == "*":
                self.next()
                return TypeNode("ptr", elem=self.parse_type())
            if tok.val == "(":
                self.next()
                t = self.parse_type()
                self.expect_op(")")
                return t
            if tok.val == "[":
                self.next()
                if self.is_op("]"):
                    self.next()
                    return TypeNode("slice", elem=self.parse_type())
                length = []
                while not self.is_op("]"):
                    length.append(self.next().val)
                self.next()
                return TypeNode("array", length="".join(length),
                                elem=self.parse_type())
            if tok.val == "<-":
                self.next()
                self.expect_ident()  # chan
                return TypeNode("chan", elem=self.parse_type())
        if tok.kind == "ident":
            if tok.val == "map":
                self.next()
                self.expect_op("[")
                k = self.parse_type()
                self.expect_op("]")
                return TypeNode("map", key=k, elem=self.parse_type())
            if tok.val == "struct":
                self.next()
                return TypeNode("struct", fields=self.parse_struct_body())
            if tok.val == "interface":
                self.next()
                self.skip_balanced()
                return TypeNode("interface")
            if tok.val == "func":
                self.next()
                self.skip_balanced()  # params
                nxt = self.peek()
                if nxt.kind == "op" and nxt.val == "(":
                    self.skip_balanced()
                elif not (nxt.kind in ("str", "raw", "eof") or
                          (nxt.kind == "op" and nxt.val in (";", ")", ",",
                                                             "}", "]", "{"))):
                    self.parse_type()
                return TypeNode("func")
            if tok.val == "chan":
                self.next()
                if self.is_op("<-"):
                    self.next()
                return TypeNode("chan", elem=self.parse_type())
            return self.parse_type_name()
        raise ParseError("%s:%d: unexpected %r in type" %
                         (self.fname, tok.line, tok.val))

    def parse_type_name(self) -> TypeNode:
        a = self.expect_ident().val
        if self.is_op("."):
            self.next()
            b = self.expect_ident().val
            node = TypeNode("named", pkg=a, name=b)
        else:
            node = TypeNode("named", name=a)
        if self.is_op("[") and not self.is_op("]", 1):
            self.skip_balanced()  # type arguments
        return node

    def parse_struct_body(self) -> List[GoField]:
        self.expect_op("{")
        fields: List[GoField] = []
        while True:
            tok = self.peek()
            if tok.kind == "op" and tok.val == ";":
                self.next()
                continue
            if tok.kind == "op" and tok.val == "}":
                self.next()
                return fields
            doc = tok.pre
            line = tok.line
            names: List[str] = []
            if tok.kind == "op" and tok.val == "*":
                self.next()
                typ = TypeNode("ptr", elem=self.parse_type_name())
            elif tok.kind == "ident" and (
                    self.is_op(".", 1) or self.is_op(";", 1) or
                    self.is_op("}", 1) or self.peek(1).kind in ("str", "raw")):
                typ = self.parse_type_name()
            else:
                names.append(self.expect_ident().val)
                while self.is_op(","):
                    self.next()
                    names.append(self.expect_ident().val)
                typ = self.parse_type()
            tag = ""
            if self.peek().kind in ("str", "raw"):
                tag = go_unquote(self.next().val)
            if not (self.is_op(";") or self.is_op("}")):
                raise ParseError("%s:%d: unexpected %r after field" %
                                 (self.fname, self.peek().line,
                                  self.peek().val))
            fields.append(GoField(names, typ, tag, doc, line))


def default_import_name(path: str) -> str:
    last = path.rstrip("/").split("/")[-1]
    # gopkg.in/yaml.v2 style
    m = re.match(r"^(.*)\.v\d+$", last)
    if m and path.startswith("gopkg.in/"):
        return m.group(1)
    return last


def go_unquote(lit: str) -> str:
    if lit.startswith("`"):
        return lit[1:-1].replace("\r", "")
    body = lit[1:-1]
    out = []
    i = 0
    simple = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"',
              "'": "'", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
    while i < len(body):
        c = body[i]
        if c == "\\" and i + 1 < len(body):
            d = body[i + 1]
            if d in simple:
                out.append(simple[d])
                i += 2
                continue
            if d == "x":
                out.append(chr(int(body[i + 2:i + 4], 16)))
                i += 4
                continue
            if d == "u":
                out.append(chr(int(body[i + 2:i + 6], 16)))
                i += 6
                continue
            if d == "U":
                out.append(chr(int(body[i + 2:i + 10], 16)))
                i += 10
                continue
            if d in "01234567":
                out.append(chr(int(body[i + 1:i + 4], 8)))
                i += 4
                continue
        out.append(c)
        i += 1
    return "".join(out)


# ---------------------------------------------------------------------------
# struct tags and encoding/json rules
# ---------------------------------------------------------------------------

def tag_lookup(tag: str, key: str) -> Tuple[str, bool]:
    """reflect.StructTag.Lookup."""
    while tag:
        i = 0
        while i < len(tag) and tag[i] == " ":
            i += 1
        tag = tag[i:]
        if not tag:
            break
        i = 0
        while i < len(tag) and tag[i] > " " and tag[i] != ":" and \
                tag[i] != '"' and tag[i] != "\x7f":
            i += 1
        if i == 0 or i + 1 >= len(tag) or tag[i] != ":" or tag[i + 1] != '"':
            break
        name = tag[:i]
        tag = tag[i + 1:]
        i = 1
        while i < len(tag) and tag[i] != '"':
            if tag[i] == "\\":
                i += 1
            i += 1
        if i >= len(tag):
            break
        qvalue = tag[:i + 1]
        tag = tag[i + 1:]
        if key == name:
            return go_unquote(qvalue), True
    return "", False


TAG_NAME_PUNCT = set("!#$%&()*+-./:;<=>?@[]^_{|}~ ")


def valid_tag_name(s: str) -> bool:
    """encoding/json isValidTag."""
    if not s:
        return False
    for c in s:
        if c in TAG_NAME_PUNCT:
            continue
        if not (c.isalpha() or c.isdigit()):
            return False
    return True


def exported(name: str) -> bool:
    return bool(name) and name[0].isupper()


# ---------------------------------------------------------------------------
# Universe: all parsed packages
# ---------------------------------------------------------------------------

@dataclass
class Classified:
    cls: str       # typeclass
    target: str    # innermost named type, or "-"
    shape: str     # resolved structure with leaf classes
    gotype: str    # Go type with qualified names


class Universe:
    def __init__(self):
        self.types: Dict[str, TypeDecl] = {}          # "pkg.Name" -> decl
        self.methods: Dict[str, Dict[str, bool]] = {}  # "pkg.Name" -> {m: ptr}
        self.pkg_of_import: Dict[str, str] = {}        # import path -> pkg id
        self.emit_pkgs: List[str] = []
        self._zero_cache: Dict[str, str] = {}
        self._fields_cache: Dict[str, List[Row]] = {}
        self._zero_busy = set()

    def pkg_id(self, import_path: str) -> str:
        return self.pkg_of_import.get(import_path, import_path)

    def add_file(self, pkg: str, fname: str, src: str):
        toks = tokenize(src, fname)
        p = GoFileParser(toks, fname)
        try:
            p.parse()
        except ParseError as e:
            die(str(e))
        for name, typ, alias, doc, line in p.types:
            q = pkg + "." + name
            if q in self.types:
                die("%s:%d: type %s declared twice (also %s:%d)" %
                    (fname, line, q, self.types[q].file, self.types[q].line))
            self.types[q] = TypeDecl(pkg, name, typ, alias, doc, fname, line,
                                     p.imports)
        for recv, mname, ptr in p.methods:
            self.methods.setdefault(pkg + "." + recv, {})[mname] = ptr

    # -- name resolution
    def qualify(self, node: TypeNode, decl_pkg: str,
                imports: Dict[str, str]) -> str:
        if node.pkg is None:
            if node.name in BUILTIN_CLASS and \
                    decl_pkg + "." + node.name not in self.types:
                return node.name
            return decl_pkg + "." + node.name
        path = imports.get(node.pkg)
        if path is None:
            die("%s: unknown import alias %r" % (decl_pkg, node.pkg))
        return self.pkg_id(path) + "." + node.name

    def go_type(self, node: TypeNode, pkg: str, imports) -> str:
        k = node.kind
        if k == "named":
            return self.qualify(node, pkg, imports)
        if k == "ptr":
            return "*" + self.go_type(node.elem, pkg, imports)
        if k == "slice":
            return "[]" + self.go_type(node.elem, pkg, imports)
        if k == "array":
            return "[%s]" % node.length + self.go_type(node.elem, pkg, imports)
        if k == "map":
            return "map[%s]%s" % (self.go_type(node.key, pkg, imports),
                                  self.go_type(node.elem, pkg, imports))
        if k == "chan":
            return "chan " + self.go_type(node.elem, pkg, imports)
        return k + "{...}" if k in ("struct", "interface") else k

    def canon(self, q: str) -> str:
        """Follow alias declarations (`type A = B`) to the aliased type."""
        seen = set()
        while q in self.types and self.types[q].alias:
            if q in seen:
                die("alias cycle at %s" % q)
            seen.add(q)
            d = self.types[q]
            if d.type.kind != "named":
                break
            q = self.qualify(d.type, d.pkg, d.imports)
        return q

    def struct_of(self, q: str) -> Optional[TypeDecl]:
        """The declaration holding the struct literal of type q, following
        aliases and defined types (`type List metav1.List`), else None."""
        seen = set()
        q = self.canon(q)
        while q in self.types and q not in seen:
            seen.add(q)
            d = self.types[q]
            if d.type.kind == "struct":
                return d
            if d.type.kind != "named":
                return None
            q = self.canon(self.qualify(d.type, d.pkg, d.imports))
        return None

    def marshal_json(self, q: str) -> str:
        """'value', 'pointer' or '': receiver of q's own MarshalJSON method.
        (A defined type does not inherit the methods of its underlying
        named type; an alias is the same type.)"""
        m = self.methods.get(self.canon(q), {})
        if "MarshalJSON" in m:
            return "pointer" if m["MarshalJSON"] else "value"
        return ""

    def classify(self, node: TypeNode, pkg: str, imports,
                 depth=0) -> Classified:
        if depth > 50:
            die("type recursion too deep in %s" % pkg)
        gotype = self.go_type(node, pkg, imports)
        k = node.kind
        if k == "ptr":
            e = self.classify(node.elem, pkg, imports, depth + 1)
            return Classified("pointer", e.target, "*" + e.shape, gotype)
        if k == "slice":
            e = self.classify(node.elem, pkg, imports, depth + 1)
            if e.shape == "int" and e.gotype in ("byte", "uint8"):
                return Classified("bytes", "-", "bytes", gotype)
            return Classified("slice", e.target, "[]" + e.shape, gotype)
        if k == "array":
            e = self.classify(node.elem, pkg, imports, depth + 1)
            return Classified("array", e.target,
                              "[%s]" % node.length + e.shape, gotype)
        if k == "map":
            kk = self.classify(node.key, pkg, imports, depth + 1)
            e = self.classify(node.elem, pkg, imports, depth + 1)
            return Classified("map", e.target,
                              "map[%s]%s" % (kk.shape, e.shape), gotype)
        if k in ("struct", "interface", "func", "chan"):
            return Classified(k, "-", k, gotype)
        # named
        q = self.qualify(node, pkg, imports)
        return self.classify_named(q, depth, gotype)

    def classify_named(self, q: str, depth=0, gotype=None) -> Classified:
        gotype = gotype or q
        q = self.canon(q)
        if q in BUILTIN_CLASS:
            return Classified(BUILTIN_CLASS[q], "-", BUILTIN_CLASS[q], gotype)
        if q in STDLIB_CLASS:
            return Classified(STDLIB_CLASS[q], q, STDLIB_CLASS[q], gotype)
        if self.marshal_json(q):
            c = MARSHALER_CLASS.get(q, "marshaler")
            return Classified(c, q, c, gotype)
        d = self.types.get(q)
        if d is None:
            return Classified("external", q, "external", gotype)
        if self.struct_of(q) is not None:
            return Classified("struct", q, "struct", gotype)
        u = self.classify(d.type, d.pkg, d.imports, depth + 1)
        if u.cls in ("pointer", "slice", "array", "map"):
            target = u.target
        elif u.cls in ("string", "bool", "int", "float", "complex", "bytes"):
            target = q
        else:
            target = u.target
        return Classified(u.cls, target, u.shape, gotype)

    # -- encoding/json view of a struct
    def json_fields(self, q: str) -> List["Row"]:
        """The JSON members of struct q in declaration order, as encoding/json typeFields sees
        them: embedded structs without a json name are flattened (shallowest depth wins, then the
        tagged field; ties are dropped), `json:"-"` and unexported fields are left out."""
        if q in self._fields_cache:
            return self._fields_cache[q]
        # (json name, depth, tagged, order, row) candidates
        cands = []

        def walk(sq, depth, via, seen):
            sd = self.struct_of(sq)
            for f in sd.type.fields:
                jt, has_tag = tag_lookup(f.tag, "json")
                name, _ = parse_json_tag(jt)
                if not valid_tag_name(name):
                    name = ""
                if f.embedded:
                    t = f.type.elem if f.type.kind == "ptr" else f.type
                    eq = self.canon(self.qualify(t, sd.pkg, sd.imports))
                    gonames = [t.name]
                    is_struct = self.struct_of(eq) is not None
                    if not exported(t.name) and not is_struct:
                        continue  # unexported non-struct embedded: ignored
                    if jt != "-" and name == "" and is_struct:
                        # promoted: encoding/json inlines the fields
                        if self.marshal_json(eq):
                            die("%s embeds %s, which has MarshalJSON" % (sq, eq))
                        if eq not in seen:
                            ptr = "*" if f.type.kind == "ptr" else ""
                            walk(eq, depth + 1, via + [ptr + eq], seen | {eq})
                        continue
                else:
                    gonames = [n for n in f.names if exported(n)]
                for gofield in gonames:
                    if jt == "-":  # json:"-": never encoded
                        continue
                    jname = name or gofield
                    r = self.row(jname, jt, has_tag, f.type, sd, via)
                    cands.append((jname, depth, name != "", len(cands), r))

        walk(q, 0, [], {q})
        by_name: Dict[str, list] = {}
        for c in cands:
            by_name.setdefault(c[0], []).append(c)
        keep = []
        for name, cs in by_name.items():
            mind = min(c[1] for c in cs)
            top = [c for c in cs if c[1] == mind]
            if len(top) > 1:
                tagged = [c for c in top if c[2]]
                if len(tagged) != 1:
                    warn("%s: json name %r is ambiguous; dropped" % (q, name))
                    continue
                top = tagged
            keep.append(top[0])
        keep.sort(key=lambda c: c[3])
        rows = [c[4] for c in keep]
        self._fields_cache[q] = rows
        return rows

    def row(self, jname, jt, has_tag, typ, sd, via) -> "Row":
        c = self.classify(typ, sd.pkg, sd.imports)
        _, opts = parse_json_tag(jt)
        return Row(jname, "omitempty" in opts, "omitzero" in opts, c,
                   self.zero_out(c, opts), ">".join(via) if via else "-",
                   tag_cell(jt, has_tag))

    def zero_out(self, c: Classified, opts: List[str]) -> str:
        """JSON encoding/json writes for this member when the Go value is the zero value (what
        decoding `null`, or leaving the key out, gives)."""
        if "omitzero" in opts:
            # the zero value is always zero, for reflect.Value.IsZero and for the IsZero methods
            # of the apimachinery types (Time, MicroTime, Quantity) alike
            return OMITTED
        if "omitempty" in opts and (c.cls in OMITEMPTY_CLASSES or (
                c.cls == "array" and c.shape.startswith("[0]"))):
            return OMITTED
        return self.zero_json_of(c)

    def zero_json_of(self, c: Classified) -> str:
        if c.cls == "struct":
            return self.struct_zero_json(c.target)
        if c.cls == "array":
            return "[...]"
        return ZERO_JSON.get(c.cls, "?")

    def struct_zero_json(self, q: str) -> str:
        """JSON of the zero value of struct type q (recursive)."""
        if q in self._zero_cache:
            return self._zero_cache[q]
        if q in self._zero_busy:
            return "{...}"  # recursive type
        self._zero_busy.add(q)
        parts = ['"%s":%s' % (r.name, r.zero_out) for r in self.json_fields(q)
                 if r.zero_out != OMITTED]
        self._zero_busy.discard(q)
        out = "{" + ",".join(parts) + "}"
        self._zero_cache[q] = out
        return out


@dataclass
class Row:
    """One JSON member of a struct."""
    name: str
    omitempty: bool
    omitzero: bool
    c: Classified
    zero_out: str
    via: str        # chain of embedded types it is promoted from, or -
    json_tag: str


def tag_cell(jt: str, has_tag: bool) -> str:
    """json_tag column: the tag value, `""` for an empty one, (none)."""
    if not has_tag:
        return "(none)"
    return jt if jt else '""'


def parse_json_tag(jt: str) -> Tuple[str, List[str]]:
    if jt == "":
        return "", []
    parts = jt.split(",")
    return parts[0], parts[1:]


# ---------------------------------------------------------------------------
# Loading the repositories
# ---------------------------------------------------------------------------

SKIP_FILE_RE = re.compile(
    r"(_test\.go|^zz_generated\..*\.go|^generated\.pb\.go|"
    r"^generated\.protomessage\.pb\.go|_generated\.go)$")


@dataclass
class Repo:
    """One repository read: its Go module, its source and its packages (directory -> short id)."""
    module: str
    source: Source
    packages: Dict[str, str]
    kinds: bool  # whether its packages' register.go files register kinds that are read


def go_files_in(src: Source, directory: str) -> List[str]:
    prefix = directory + "/" if directory else ""
    res = []
    for p in src.files():
        if not p.startswith(prefix) or not p.endswith(".go"):
            continue
        rest = p[len(prefix):]
        if "/" in rest or SKIP_FILE_RE.search(rest):
            continue
        res.append(p)
    return res


def api_packages(src: Source) -> Dict[str, str]:
    """Directories <group>/<version> of k8s.io/api holding API types (their own short id)."""
    dirs = {}
    for p in src.files():
        parts = p.split("/")
        if len(parts) == 3 and parts[2] == "register.go" and \
                re.match(r"^v\d+((alpha|beta)\d+)?$", parts[1]):
            dirs[parts[0] + "/" + parts[1]] = parts[0] + "/" + parts[1]
    if not dirs:
        die("%s: no <group>/<version>/register.go found; is this k8s.io/api?" % src.path)
    return dirs


def load(repos: List[Repo]) -> Universe:
    u = Universe()
    for repo in repos:
        for d, short in repo.packages.items():
            u.pkg_of_import[repo.module + "/" + d] = short
    for repo in repos:
        for d, short in sorted(repo.packages.items()):
            files = go_files_in(repo.source, d)
            if not files:
                die("no Go files in %s of %s" % (d, repo.source.path))
            repo.source.read_many(files)
            for f in files:
                text = repo.source.read(f)
                if build_ok(text):
                    u.add_file(short, f, text)
    u.emit_pkgs = sorted({short for repo in repos if repo.module == API_MODULE
                          for short in repo.packages.values()} | EXTRA_EMIT)
    return u


def all_structs(u: Universe) -> List[str]:
    """Every struct type that has rows in --all: each exported struct type (including defined
    types over a struct, e.g. `type List metav1.List`) of the emitted packages; of meta/v1 only
    those with a json tag or an embedded field. Types with their own MarshalJSON are leaves."""
    res = []
    emit = set(u.emit_pkgs)
    for q, d in u.types.items():
        if d.pkg not in emit or d.alias or not exported(d.name):
            continue
        sd = u.struct_of(q)
        if sd is None or u.marshal_json(q):
            continue
        if d.pkg == "meta/v1" and not any(
                tag_lookup(f.tag, "json")[1] or f.embedded for f in sd.type.fields):
            continue
        res.append(q)
    return sorted(res, key=type_key)


def type_key(q: str):
    pkg, name = q.rsplit(".", 1)
    return (pkg, name)


# ---------------------------------------------------------------------------
# Kinds (register.go)
# ---------------------------------------------------------------------------

def registered_kinds(u: Universe, src: Source, d: str, short: str) -> List[List[str]]:
    """group, version, kind and type of every `scheme.AddKnownTypes(SchemeGroupVersion, &T{}...)`
    of the package's register.go."""
    path = d + "/register.go"
    text = src.read(path)
    toks = tokenize(text, path)
    imports = GoFileParser(toks, path)
    try:
        imports.parse()
    except ParseError as e:
        die(str(e))
    consts = {}
    for i, t in enumerate(toks[:-3]):
        if t.kind == "ident" and t.val == "const" and toks[i + 1].kind == "ident" and \
                toks[i + 2].val == "=" and toks[i + 3].kind == "str":
            consts[toks[i + 1].val] = go_unquote(toks[i + 3].val)
    group = version = None
    for i, t in enumerate(toks):
        if t.kind == "ident" and t.val == "SchemeGroupVersion" and toks[i + 1].val == "=":
            j = i + 2
            while toks[j].val != "{":
                j += 1
            k = j
            while toks[k].val != "}":
                if toks[k].val in ("Group", "Version") and toks[k + 1].val == ":":
                    v = toks[k + 2]
                    val = go_unquote(v.val) if v.kind == "str" else consts.get(v.val)
                    if toks[k].val == "Group":
                        group = val
                    else:
                        version = val
                k += 1
            break
    if group is None or version is None:
        die("%s: SchemeGroupVersion not understood" % path)
    rows = []
    for i, t in enumerate(toks):
        if not (t.kind == "ident" and t.val == "AddKnownTypes" and toks[i + 1].val == "("):
            continue
        j = i + 2
        while toks[j].val == ";":
            j += 1
        if toks[j].val != "SchemeGroupVersion":
            continue
        depth = 0
        k = i + 1
        while True:
            v = toks[k].val if toks[k].kind == "op" else None
            if v == "(":
                depth += 1
            elif v == ")":
                depth -= 1
                if depth == 0:
                    break
            elif v == "&":
                if toks[k + 2].val == ".":
                    node = TypeNode("named", pkg=toks[k + 1].val, name=toks[k + 3].val)
                else:
                    node = TypeNode("named", name=toks[k + 1].val)
                q = u.qualify(node, short, imports.imports)
                if q not in u.types:
                    die("%s: registered type %s not found" % (path, q))
                rows.append([group, version, node.name, q])
            k += 1
    return rows


def version_key(v: str):
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (9, 0, 0, v)
    stage = {"alpha": 0, "beta": 1, None: 2}[m.group(2)]
    return (-stage, -int(m.group(1)), -int(m.group(3) or 0), v)


LIFECYCLE_FILE = "zz_generated.prerelease-lifecycle.go"
LIFECYCLE_RE = re.compile(r"func \(in \*(\w+)\) APILifecycle(Introduced|Removed)\(\) "
                          r"\(major, minor int\) \{\s*return (\d+), (\d+)\s*\}")


def lifecycles(repos: List[Repo]) -> Dict[str, Dict[str, Tuple[int, int]]]:
    """Type -> {"Introduced": (major, minor), "Removed": ...} from the prerelease-lifecycle-gen
    files (alpha and beta types only; GA types have none)."""
    res: Dict[str, Dict[str, Tuple[int, int]]] = {}
    for repo in repos:
        if not repo.kinds:
            continue
        for d, short in sorted(repo.packages.items()):
            path = d + "/" + LIFECYCLE_FILE
            if not repo.source.exists(path):
                continue
            for m in LIFECYCLE_RE.finditer(repo.source.read(path)):
                res.setdefault(short + "." + m.group(1), {})[m.group(2)] = \
                    (int(m.group(3)), int(m.group(4)))
    return res


# Registered kinds with an ObjectMeta that the API server does not serve, though no
# APILifecycleRemoved says so (the tests of src/generated.rs compare the kinds with k8s-openapi's
# resources, generated from the API server's OpenAPI document):
NOT_SERVED = {
    "core/v1.RangeAllocation",  # the service IP/port allocators' internal storage object
    "apidiscovery/v2.APIGroupDiscovery",  # an aggregated discovery document, not a resource
    "imagepolicy/v1alpha1.ImageReview",  # the image policy webhook's payload, not a resource
    # versions removed in Kubernetes 1.22 whose packages have no lifecycle markers
    "node/v1alpha1.RuntimeClass",
    "rbac/v1alpha1.ClusterRole",
    "rbac/v1alpha1.ClusterRoleBinding",
    "rbac/v1alpha1.Role",
    "rbac/v1alpha1.RoleBinding",
}


NON_NAMESPACED_RE = re.compile(r"^//\s*\+genclient:nonNamespaced\s*$")


def scope(u: Universe, q: str) -> str:
    """Cluster when the kind's type declaration carries `+genclient:nonNamespaced` in the comments
    before it (the tag client-gen and the API's registry agree on), else Namespaced."""
    decl = u.types[u.canon(q)]
    lines = [ln.strip() for c in decl.doc for ln in c.splitlines()]
    return "Cluster" if any(NON_NAMESPACED_RE.match(ln) for ln in lines) else "Namespaced"


def applied_kinds(u: Universe, repos: List[Repo],
                  release: Tuple[int, int]) -> List[List[str]]:
    """The kinds a user applies: registered, served by the given Kubernetes release (an
    alpha or beta type is no longer served from its APILifecycleRemoved release on, as the API
    server's resource expiration does), with an ObjectMeta `metadata`, not a *List."""
    rows = []
    life = lifecycles(repos)
    for repo in repos:
        if not repo.kinds:
            continue
        for d, short in sorted(repo.packages.items()):
            for row in registered_kinds(u, repo.source, d, short):
                removed = life.get(row[3], {}).get("Removed")
                if removed is not None and removed <= release or row[3] in NOT_SERVED:
                    continue
                members = {r.name: r for r in u.json_fields(row[3])} \
                    if u.struct_of(row[3]) else {}
                meta = members.get("metadata")
                if meta is None or meta.c.target != "meta/v1.ObjectMeta":
                    continue
                items = members.get("items")
                if items is not None and items.c.cls == "slice":
                    continue  # a list kind (ListMeta would not reach here; be safe)
                rows.append(row + [scope(u, row[3])])
    rows.sort(key=lambda r: (r[0], version_key(r[1]), r[2]))
    return rows


# ---------------------------------------------------------------------------
# The trimmed fields table
# ---------------------------------------------------------------------------

def form_leaf_target(q: str, r: Row) -> Tuple[str, str, str]:
    m = SHAPE_RE.match(r.c.shape)
    leaf = LEAF_OF_CLASS.get(m.group("leaf")) if m else None
    if leaf is None:
        die("%s.%s: type %s (shape %s) has no form and leaf" % (q, r.name, r.c.gotype, r.c.shape))
    form = FORM_OF_PREFIX[m.group("form")]
    if leaf == "object":
        target = r.c.target
    elif leaf.startswith("schema-or-"):
        target = SCHEMA_PROPS
    else:
        target = "-"
    return form, leaf, target


def kept_types(u: Universe, roots: List[str]) -> Tuple[List[str], set]:
    """The struct types reachable from the roots, except through a root's own top-level
    `status`, sorted; and those reached other than as a root (whose `status` is kept)."""
    full = set()
    todo = []

    def reach(q, r):
        target = form_leaf_target(q, r)[2]
        if target != "-" and target not in full:
            full.add(target)
            todo.append(target)

    for q in roots:
        for r in u.json_fields(q):
            if r.name != "status":
                reach(q, r)
    listed = set()
    for q in STATUS_LISTED & set(roots):
        for r in u.json_fields(q):
            target = form_leaf_target(q, r)[2]
            if r.name == "status" and target != "-":
                listed.add(target)
                todo.append(target)
    while todo:
        q = todo.pop()
        for r in u.json_fields(q):
            reach(q, r)
    kept = sorted(full | listed | set(roots), key=type_key)
    emit = set(u.emit_pkgs)
    for q in kept:
        if type_key(q)[0] not in emit or u.struct_of(q) is None:
            die("%s: reachable, but not a struct of the API packages" % q)
    return kept, full


def trimmed_rows(u: Universe, kinds: List[List[str]], audit: bool) -> List[List[str]]:
    if audit:
        types, full = all_structs(u), set(all_structs(u))
    else:
        types, full = kept_types(u, sorted({k[3] for k in kinds}))
    rows = []
    for q in types:
        pkg, name = type_key(q)
        for r in u.json_fields(q):
            form, leaf, target = form_leaf_target(q, r)
            if r.c.cls == "interface" and not audit:
                # a member of its own (not an element) would be dropped by omitempty when null
                die("%s.%s: an interface{} member needs a leaf of its own" % (q, r.name))
            if r.name == "status" and q not in full and target != "-":
                leaf, target = "status", "-"
            if r.zero_out == "?":
                die("%s.%s: unknown zero value of %s" % (q, r.name, r.c.gotype))
            row = [pkg, name, r.name, "1" if r.omitempty else "0",
                   "1" if r.omitzero else "0", form, leaf, target,
                   "1" if r.zero_out == "null" else "0"]
            if audit:
                row += [r.zero_out, r.c.gotype, r.via, r.json_tag]
            rows.append(row)
    return rows


def status_rows(u: Universe, kinds: List[List[str]]) -> List[List[str]]:
    """The kinds whose status type's zero value holds an object (a struct member, which Go
    always writes), with that zero value's JSON: every stored object of the kind holds those
    objects in its status, whatever its controllers fill in."""
    rows = []
    for group, version, kind, q, _ in kinds:
        for r in u.json_fields(q):
            if r.name == "status" and r.zero_out.startswith("{") and ":{" in r.zero_out:
                rows.append([group, version, kind, r.zero_out])
    return rows


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def gomod_require(text: str, module: str) -> Optional[str]:
    for ln in text.splitlines():
        s = ln.strip()
        if s.startswith("require "):
            s = s[len("require "):].strip()
        parts = s.split()
        if len(parts) >= 2 and parts[0] == module:
            return parts[1]
    return None


def header(repos: List[Repo], what: str, release: Tuple[int, int]) -> List[str]:
    lines = ["# %s." % what,
             "# Written by tools/derive-api-fields.py (make api-fields), which "
             "describes the columns,",
             "# from these commits:"]
    for repo in repos:
        s = repo.source
        lines.append("# %-31s %s %s%s" % (repo.module, s.commit, s.commit_date[:10] or "?",
                                          " tags " + ",".join(s.tags) if s.tags else ""))
    by_module = {repo.module: repo.source for repo in repos}
    for repo in repos:
        if not repo.source.exists("go.mod"):
            continue
        gomod = repo.source.read("go.mod")
        for module, dep in sorted(by_module.items()):
            req = gomod_require(gomod, module) if module != repo.module else None
            if req is None:
                continue
            m = re.match(r"^v\d+\.\d+\.\d+-(?:.*[.-])?\d{14}-([0-9a-f]{12})$", req)
            if dep.commit == "unknown":
                note = "not checked"
            elif (m and dep.commit.startswith(m.group(1))) or req in dep.tags:
                note = "the one above"
            else:
                note = "not the one above"
            lines.append("#   %s requires %s %s (%s)" % (repo.module, module, req, note))
    lines.append("# Kinds served by Kubernetes %d.%d (alpha and beta kinds removed by then are "
                 "left out)." % release)
    return lines


def write_table(path: Optional[str], head: List[str], columns: List[str],
                rows: List[List[str]]):
    text = []
    for r in [columns] + rows:
        for c in r:
            if "\t" in c or "\n" in c:
                die("tab or newline in cell %r" % c)
        text.append("\t".join(r))
    out = "\n".join(head + text) + "\n"
    if path is None:
        sys.stdout.write(out)
    else:
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("api", help="k8s.io/api: bare git dir, checkout or source directory")
    ap.add_argument("apimachinery", help="k8s.io/apimachinery, likewise")
    ap.add_argument("apiextensions", help="k8s.io/apiextensions-apiserver, likewise")
    ap.add_argument("--aggregator", help="k8s.io/kube-aggregator, likewise (APIService); "
                    "without it apiregistration.k8s.io is left out")
    for name in ("api", "apimachinery", "apiextensions", "aggregator"):
        ap.add_argument("--%s-rev" % name, default="HEAD",
                        help="revision of %s to read (git only)" % name)
    ap.add_argument("--fields", help="write the fields table to FIELDS instead of stdout")
    ap.add_argument("--kinds", help="write the kinds table to KINDS")
    ap.add_argument("--statuses", help="write the statuses table to STATUSES")
    ap.add_argument("--kubernetes", metavar="1.MINOR",
                    help="the release whose served kinds are listed (default: the newest "
                    "APILifecycleIntroduced of the alpha and beta types, the release in the "
                    "making on a master commit)")
    ap.add_argument("--all", action="store_true",
                    help="every struct of the parsed packages, with audit columns")
    args = ap.parse_args(argv)

    api = Source(args.api, args.api_rev)
    repos = [
        Repo(API_MODULE, api, api_packages(api), True),
        Repo(AM_MODULE, Source(args.apimachinery, args.apimachinery_rev), AM_PACKAGES, False),
        Repo(APIEXT_MODULE, Source(args.apiextensions, args.apiextensions_rev),
             APIEXT_PACKAGES, True),
    ]
    if args.aggregator:
        repos.append(Repo(AGG_MODULE, Source(args.aggregator, args.aggregator_rev),
                          AGG_PACKAGES, True))
    u = load(repos)
    if args.kubernetes:
        m = re.match(r"^1\.(\d+)$", args.kubernetes)
        if not m:
            die("--kubernetes: expected 1.<minor>, got %r" % args.kubernetes)
        release = (1, int(m.group(1)))
    else:
        introduced = [v["Introduced"] for v in lifecycles(repos).values() if "Introduced" in v]
        if not introduced:
            die("no APILifecycleIntroduced found: give --kubernetes")
        release = max(introduced)
    kinds = applied_kinds(u, repos, release)
    rows = trimmed_rows(u, kinds, args.all)
    what = "api_fields.tsv: how the API server writes each member of the built-in kinds back"
    write_table(args.fields, header(repos, what, release),
                COLUMNS_AUDIT if args.all else COLUMNS_FIELDS, rows)
    if args.kinds:
        what = "api_kinds.tsv: the built-in kinds a user applies and their types"
        write_table(args.kinds, header(repos, what, release), COLUMNS_KINDS, kinds)
    if args.statuses:
        what = "api_status.tsv: the status every stored object of a kind holds, where it has an object"
        write_table(args.statuses, header(repos, what, release), COLUMNS_STATUSES,
                    status_rows(u, kinds))


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:
        # output piped into head & co.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(1)
