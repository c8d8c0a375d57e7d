#!/usr/bin/env python3
"""Derive the table of quantities and the form the API server stores them in from apimachinery's tests.

usage: derive-quantity-table.py APIMACHINERY [--rev REV] > tests/corpus/stored-quantities.tsv
  APIMACHINERY is k8s.io/apimachinery: a bare git directory or a git checkout, read from its git
  objects at REV (default HEAD), so the table always matches the commit named in its header.

The API server writes a resource.Quantity back with Quantity.MarshalJSON (and protobuf's Marshal),
both of which write Quantity.String(). This script runs no Go and copies no Go code: it reads the
expectations that pkg/api/resource/quantity_test.go itself asserts about String() after a parse,
row by row, and writes each as `input TAB stored TAB test:line`:
- TestQuantityParseZero: MustParse("0").String() is "0";
- TestQuantityString: each `expect` parsed keeps its text (q.s == expect, which String() returns),
  and each non-empty `alternate` parsed gives `expect`;
- TestQuantityParseEmit: each `in` parsed gives `expect`, and "-"+in gives "-"+expect;
- TestJSONWhitespace: each JSON text decoded by UnmarshalJSON (a quoted string or a bare number)
  gives `expect`;
- TestParseQuantity: each `input` gives `canonical`, or `input` itself when `canonical` is unset.
The input column is the JSON value the manifest holds (a quoted string, or a bare number). An input
asserted twice must be asserted with the same stored form.

With --corpus DIR, the quantities the YAML files of DIR hold (the values of the keys in
QUANTITY_KEY, as written) are added too, each with its stored form by the rule quantity.go's own
documentation of Quantity gives (its doc comment: "When a Quantity is parsed from a string, it will
remember the type of suffix it had ... Before serializing, Quantity will be put in canonical form
... No precision is lost, No fractional digits will be emitted, The exponent (or suffix) is as large
as possible"), applied only to the plain forms it settles without doubt: `0`, or digits without a
leading zero, a sign, a fraction or an exponent, with a decimal SI suffix (n u m "" k M G T P E) or a
binary one (Ki ... Ei), of at most 2^63-1 in magnitude. The rule is first held to every row the
tests assert in that class (the script stops when one differs), and its rows say `rule`. Anything
else in DIR the tests do not assert is listed on stderr and left out.
Python 3 standard library and the git command line only.
"""

import json
import re
import subprocess
import sys

SOURCE = "pkg/api/resource/quantity_test.go"


def read_source(repo, rev):
    """The test file at `rev` and the commit it resolves to."""
    commit = subprocess.run(
        ["git", "-C", repo, "rev-parse", f"{rev}^{{commit}}"], check=True, capture_output=True, text=True
    ).stdout.strip()
    text = subprocess.run(
        ["git", "-C", repo, "show", f"{commit}:{SOURCE}"], check=True, capture_output=True, text=True
    ).stdout
    return commit, text


def function_body(lines, name):
    """(first line number, lines) of `func name(` up to its closing brace at column 0."""
    start = next((i for i, line in enumerate(lines) if line.startswith(f"func {name}(")), None)
    if start is None:
        sys.exit(f"{SOURCE}: no func {name}: the test file changed, read it again")
    end = next(i for i in range(start + 1, len(lines)) if lines[i] == "}")
    return [(n + 1, lines[n]) for n in range(start, end)]


GO_STRING = r'"((?:[^"\\]|\\.)*)"'


def go_string(literal):
    """The value of a Go interpreted string literal (the escapes the test file uses)."""
    return json.loads(f'"{literal}"')


def rows(text):
    """Every (json input, stored, where) the test file asserts."""
    lines = text.split("\n")
    out = []

    def add(value, stored, test, number, bare=False):
        out.append((value if bare else json.dumps(value), stored, f"{test}:{number}"))

    for number, line in function_body(lines, "TestQuantityParseZero"):
        m = re.search(r'MustParse\("0"\)', line)
        if m:
            add("0", "0", "TestQuantityParseZero", number)
    assert any(r[2].startswith("TestQuantityParseZero") for r in out), "TestQuantityParseZero changed"

    count = len(out)
    for number, line in function_body(lines, "TestQuantityString"):
        m = re.match(r"\s*\{(?:decQuantity|Quantity)\(.*\), " + GO_STRING + ", " + GO_STRING + r"\},\s*$", line)
        if m:
            expect, alternate = go_string(m.group(1)), go_string(m.group(2))
            add(expect, expect, "TestQuantityString", number)
            if alternate:
                add(alternate, expect, "TestQuantityString", number)
    assert len(out) - count > 40, "TestQuantityString's table changed"

    count = len(out)
    for number, line in function_body(lines, "TestQuantityParseEmit"):
        m = re.match(r"\s*\{" + GO_STRING + ", " + GO_STRING + r"\},\s*$", line)
        if m:
            given, expect = go_string(m.group(1)), go_string(m.group(2))
            add(given, expect, "TestQuantityParseEmit", number)
            add("-" + given, "-" + expect, "TestQuantityParseEmit", number)
    assert len(out) - count > 10, "TestQuantityParseEmit's table changed"

    count = len(out)
    for number, line in function_body(lines, "TestJSONWhitespace"):
        m = re.match(r"\s*\{`([^`]*)`, " + GO_STRING + r"\},\s*$", line)
        if m:
            raw, expect = m.group(1), go_string(m.group(2))
            value = json.loads(raw)
            if isinstance(value, str):
                add(value, expect, "TestJSONWhitespace", number)
            else:
                # A bare number: the literal as the manifest writes it, trimmed as JSON reads it.
                add(raw.strip(), expect, "TestJSONWhitespace", number, bare=True)
    assert len(out) - count >= 8, "TestJSONWhitespace's table changed"

    count = len(out)
    for number, line in function_body(lines, "TestParseQuantity"):
        m = re.match(r"\s*\{input: " + GO_STRING + r"(.*)\},", line)
        if m:
            given = go_string(m.group(1))
            canonical = re.search(r"canonical: " + GO_STRING, m.group(2))
            add(given, go_string(canonical.group(1)) if canonical else given, "TestParseQuantity", number)
    assert len(out) - count > 50, "TestParseQuantity's table changed"
    return out


# The keys whose values are quantities in the corpus (resource lists, sizeLimit, divisor).
QUANTITY_KEY = r"cpu|memory|storage|ephemeral-storage|hugepages-[A-Za-z0-9]+|nvidia\.com/gpu|pods|sizeLimit|divisor"
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
PLAIN = re.compile(r"(0|[1-9][0-9]*)(" + "|".join(sorted(list(DECIMAL) + list(BINARY), key=len, reverse=True)) + ")")


def by_rule(text):
    """The stored form of a plain quantity by the documented rule, or None outside that class."""
    m = PLAIN.fullmatch(text)
    if not m:
        return None
    digits, suffix = int(m.group(1)), m.group(2)
    if digits == 0:
        return "0"
    if suffix in BINARY:
        value = digits << BINARY[suffix]
        if value > 2**63 - 1:
            return None
        # The binary suffix type is kept; the largest binary suffix that leaves an integer.
        for name, shift in sorted(BINARY.items(), key=lambda item: -item[1]):
            if value % (1 << shift) == 0:
                return f"{value >> shift}{name}"
        return str(value)
    # A value in units of 10^-9, so that every decimal suffix is an integer power of ten.
    nanos = digits * 10 ** (DECIMAL[suffix] + 9)
    if nanos > (2**63 - 1) * 10**9:
        return None
    for name, exponent in sorted(DECIMAL.items(), key=lambda item: -item[1]):
        unit = 10 ** (exponent + 9)
        if nanos % unit == 0:
            return f"{nanos // unit}{name}"
    raise AssertionError(text)


def corpus_values(directory):
    """Every quantity the YAML files of `directory` hold: (JSON value as the manifest holds it, text)."""
    import pathlib

    key = re.compile(r"^\s*(?:-\s*)?(?:" + QUANTITY_KEY + r")\s*:\s*(\S.*?)\s*(?:#.*)?$")
    found = set()
    for path in sorted(pathlib.Path(directory).glob("*.yaml")):
        for line in path.read_text().split("\n"):
            m = key.match(line)
            if not m:
                continue
            raw = m.group(1)
            if raw[0] in "'\"" and raw[-1] == raw[0] and len(raw) > 1:
                found.add((json.dumps(raw[1:-1]), raw[1:-1]))
            elif re.fullmatch(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?", raw):
                found.add((raw, raw))  # a YAML number: a bare JSON number
            elif re.fullmatch(r"[-+.0-9A-Za-z]+", raw):
                found.add((json.dumps(raw), raw))
    return sorted(found)


def main():
    args = sys.argv[1:]
    options = {}
    for option in ("--rev", "--corpus"):
        if option in args:
            i = args.index(option)
            options[option] = args[i + 1]
            del args[i : i + 2]
    if len(args) != 1:
        sys.exit(__doc__.split("\n\n")[1])
    commit, text = read_source(args[0], options.get("--rev", "HEAD"))
    stored = {}
    held = 0
    for value, form, where in rows(text):
        if value in stored and stored[value][0] != form:
            sys.exit(f"{value} is asserted as {stored[value][0]} ({stored[value][1]}) and as {form} ({where})")
        stored.setdefault(value, (form, where))
        if value.startswith('"') and (rule := by_rule(json.loads(value))) is not None:
            if rule != form:
                sys.exit(f"the rule gives {rule} for {value}, but {where} asserts {form}")
            held += 1
    if held < 30:
        sys.exit(f"only {held} asserted rows hold the rule: the tests changed, read them again")
    if "--corpus" in options:
        for value, raw in corpus_values(options["--corpus"]):
            if value in stored:
                continue
            form = by_rule(raw)
            if form is None:
                print(f"{value}: neither asserted by the tests nor a plain quantity: left out", file=sys.stderr)
                continue
            stored[value] = (form, "rule")
    print(
        f"# What the API server stores for each quantity: Quantity.String() as asserted by k8s.io/apimachinery {SOURCE}\n"
        f"# at commit {commit}, read by tools/derive-quantity-table.py (no Go run, no code copied).\n"
        "# Rows marked `rule`: the corpus's plain quantities, by the canonical-form rule of Quantity's doc comment in\n"
        "# pkg/api/resource/quantity.go, held first to every row above it applies to (see the script).\n"
        "# JSON value as the manifest holds it (quoted string or bare number) TAB stored form TAB test function:line, or rule"
    )
    for value in sorted(stored):
        form, where = stored[value]
        print(f"{value}\t{form}\t{where}")


if __name__ == "__main__":
    main()
