//! Plain numbers read as Kubernetes' Go tooling reads them.
//!
//! kubectl, Helm, Argo CD, kubeconform and kubectl-validate read manifests with
//! `sigs.k8s.io/yaml` (go-yaml v2's resolver, `go.yaml.in/yaml/v2/resolve.go`); kustomize, and so
//! Flux, with go-yaml v3 (`go.yaml.in/yaml/v3/resolve.go`). Both read an unquoted scalar that
//! starts with a digit or a sign as Go's `strconv.ParseInt(s, 0, 64)` reads it once its
//! underscores are removed, then as `ParseUint`, then as a float where it has YAML's float form.
//! So `defaultMode: 0644` is the octal 420 to every one of them, `1_000` is 1000, `08` is 8 (a
//! float that Go's JSON writes `8`) and `0X1F` is 31. serde's YAML reader follows YAML 1.2's core
//! schema, where those are strings, and a manifest the API server accepts would be refused for a
//! string where an integer belongs (`defaultMode` is the common case).
//!
//! No crate resolves scalars as go-yaml does, and serde's reader does not say which scalars were
//! quoted, so the document is read a second time with yaml-rust2's event parser (already the
//! scan's reader of lines, `locate`), which does, and the plain scalars Go reads as numbers
//! where serde read strings are rewritten in serde's tree, before merge keys are applied (so a
//! merged or aliased copy gets the number too). A quick look at the text skips that second read
//! for the documents that cannot hold such a scalar ([`may_differ`]): 7 of the 763 documents of
//! the real-world tree are read again.
//!
//! Not changed: the YAML 1.1 booleans (`yes`, `no`, `on`, `off`, `y`, `n` and their capitalised
//! forms), which go-yaml v2 reads as booleans and go-yaml v3 as strings, so that kubectl, Helm
//! and Argo CD see `true` where kustomize and Flux see the string; serde reads strings, as
//! kustomize does. Keys are left as serde reads them (go-yaml writes a numeric key in decimal).
//! Where yaml-rust2 refuses what go-yaml and serde read (a tab after a key's colon, a flow
//! mapping continued on a line indented less than its key), the document keeps serde's reading;
//! so does a scalar with an explicit tag (`!!int 0644`, which serde refuses as a number).

use std::collections::HashMap;

use serde_yaml_ng::{Number, Value};
use yaml_rust2::parser::{Event, EventReceiver, Parser};
use yaml_rust2::scanner::TScalarStyle;

/// Rewrites, in `value` (serde's reading of the one YAML document `text`), each unquoted scalar
/// that Go's YAML readers read as a number and serde as a string. Call it before
/// `apply_merge`.
pub fn go_numbers(text: &str, value: &mut Value) {
    if !may_differ(text) {
        return;
    }
    let mut walker = Walker::default();
    let mut parser = Parser::new_from_str(text);
    if parser.load(&mut walker, false).is_err() {
        return;
    }
    for (path, number) in walker.patches {
        if let Some(target) = find(value, &path)
            && matches!(target, Value::String(_))
        {
            *target = Value::Number(number);
        }
    }
}

/// Whether `text` may hold a plain scalar that Go reads as a number and serde as a string: a
/// token that is a whole value (after `:`, `-`, `?`, `[`, `{` or `,`, or alone on its line, and
/// before the line's end, a comment, `,`, `]` or `}`) and that starts with `0` and a digit or
/// `O`, `X`, `B` (after an optional sign), or holds an `_`. Words in prose (a description's
/// `08:00`) are not values, so most documents are not read again.
fn may_differ(text: &str) -> bool {
    let is_token = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-' | b'.');
    text.lines().any(|line| {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if !is_token(bytes[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < bytes.len() && is_token(bytes[i]) {
                i += 1;
            }
            let token = &bytes[start..i];
            let unsigned = token.strip_prefix(b"-").or(token.strip_prefix(b"+")).unwrap_or(token);
            let candidate = matches!(unsigned, [b'0', b'0'..=b'9' | b'O' | b'X' | b'B' | b'_', ..])
                || (unsigned.first().is_some_and(u8::is_ascii_digit) && unsigned.contains(&b'_'));
            if !candidate {
                continue;
            }
            // An anchor (`&mode 0644`) may stand between the value's start and the scalar.
            let mut prefix = line[..start].trim_end();
            if let Some((rest, word)) = prefix.rsplit_once([' ', '\t'])
                && word.starts_with('&')
            {
                prefix = rest.trim_end();
            } else if prefix.starts_with('&') && !prefix.contains([' ', '\t']) {
                prefix = "";
            }
            let before = prefix.as_bytes().last().copied();
            let after = line[i..].trim_start().as_bytes().first().copied();
            let value_start = before.is_none_or(|b| matches!(b, b':' | b'-' | b'?' | b'[' | b'{' | b','));
            let value_end = after.is_none_or(|b| matches!(b, b'#' | b',' | b']' | b'}'));
            if value_start && value_end {
                return true;
            }
        }
        false
    })
}

/// What go-yaml reads an unquoted, untagged scalar as, when it is a number; `None` for anything
/// else (strings, and the booleans, nulls, infinities and fractions that start with `.`, which
/// serde reads alike).
pub fn go_number(scalar: &str) -> Option<Number> {
    let first = *scalar.as_bytes().first()?;
    if !(first.is_ascii_digit() || first == b'+' || first == b'-') {
        return None;
    }
    let plain = scalar.replace('_', "");
    if let Some(int) = parse_int(&plain) {
        return Some(int);
    }
    if yaml_float_form(&plain) {
        let float: f64 = plain.parse().ok()?;
        if !float.is_finite() {
            return None;
        }
        // Go's JSON writes an integral float without a fraction, which the API server then
        // reads as an integer.
        if float.fract() == 0.0 && float.abs() < 9.0e15 {
            return Some(Number::from(float as i64));
        }
        return Some(Number::from(float));
    }
    None
}

/// `strconv.ParseInt(s, 0, 64)`, then `ParseUint(s, 0, 64)`: an optional sign (`ParseUint`
/// takes none), then `0x`/`0X` (hex), `0o`/`0O` (octal), `0b`/`0B` (binary), a leading `0`
/// (octal) or decimal digits.
fn parse_int(text: &str) -> Option<Number> {
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (radix, digits) = match unsigned.as_bytes() {
        [b'0', b'x' | b'X', ..] => (16, &unsigned[2..]),
        [b'0', b'o' | b'O', ..] => (8, &unsigned[2..]),
        [b'0', b'b' | b'B', ..] => (2, &unsigned[2..]),
        [b'0', _, ..] => (8, &unsigned[1..]),
        _ => (10, unsigned),
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(digits, radix).ok()?;
    if negative {
        // i64::MIN's magnitude is one more than i64::MAX.
        if magnitude <= i64::MAX as u64 + 1 {
            return Some(Number::from((magnitude as i128).wrapping_neg() as i64));
        }
        return None;
    }
    if text.starts_with('+') && magnitude > i64::MAX as u64 {
        // ParseUint takes no sign.
        return None;
    }
    Some(Number::from(magnitude))
}

/// go-yaml's float form, `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn yaml_float_form(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (mantissa, exponent) = match rest.find(['e', 'E']) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let mantissa_ok = match mantissa.split_once('.') {
        Some(("", fraction)) => !fraction.is_empty() && digits(fraction) == fraction.len(),
        Some((whole, fraction)) => digits(whole) == whole.len() && digits(fraction) == fraction.len(),
        None => !mantissa.is_empty() && digits(mantissa) == mantissa.len(),
    };
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && digits(e) == e.len()
    });
    mantissa_ok && exponent_ok
}

/// One step of a path in the document.
#[derive(Debug, Clone, PartialEq)]
enum Step {
    /// An item of a sequence.
    Index(usize),
    /// The value of a mapping's scalar key, as serde reads it.
    Key(Value),
    /// The value of a key that is itself a mapping or a sequence: never rewritten.
    Opaque,
}

/// The collection a node is in.
#[derive(Debug)]
enum Frame {
    /// A sequence, with the index of its next item.
    Seq(usize),
    /// A mapping, with the step of the value it expects next, `None` when it expects a key.
    Map(Option<Step>),
}

/// An open collection.
#[derive(Debug)]
struct Open {
    frame: Frame,
    /// Whether it is (inside) a mapping's key.
    in_key: bool,
    /// Whether it pushed a step onto the path (the root pushes none).
    stepped: bool,
    /// The anchor it defines, if any.
    anchor: bool,
}

/// Where a node sits in its parent.
enum Role {
    /// The document's root.
    Root,
    /// A mapping's key.
    Key,
    /// An item of a sequence or a mapping's value.
    Item(Step),
}

/// Collects the path of every plain scalar go-yaml reads as a number.
#[derive(Default)]
struct Walker {
    open: Vec<Open>,
    path: Vec<Step>,
    patches: Vec<(Vec<Step>, Number)>,
    /// The patches under each anchor, relative to it, for the aliases that copy it.
    anchors: HashMap<usize, Vec<(Vec<Step>, Number)>>,
    /// The anchors being read, with the path length where each starts.
    reading: Vec<(usize, usize)>,
    /// Whether the first document ended (the text holds one).
    done: bool,
}

impl Walker {
    fn role(&mut self) -> Role {
        match self.open.last_mut() {
            None => Role::Root,
            Some(Open {
                frame: Frame::Seq(next),
                ..
            }) => {
                *next += 1;
                Role::Item(Step::Index(*next - 1))
            }
            Some(Open {
                frame: Frame::Map(expected),
                ..
            }) => match expected.take() {
                Some(step) => Role::Item(step),
                None => Role::Key,
            },
        }
    }

    fn in_key(&self) -> bool {
        self.open.last().is_some_and(|o| o.in_key)
    }

    /// Sets what the open mapping expects after the key just read.
    fn expect(&mut self, step: Step) {
        if let Some(Open {
            frame: Frame::Map(expected),
            ..
        }) = self.open.last_mut()
        {
            *expected = Some(step);
        }
    }

    fn record(&mut self, number: Number) {
        for &(anchor, start) in &self.reading {
            self.anchors
                .entry(anchor)
                .or_default()
                .push((self.path[start..].to_vec(), number.clone()));
        }
        self.patches.push((self.path.clone(), number));
    }

    fn start(&mut self, frame: Frame, anchor: usize) {
        let in_key = self.in_key();
        let role = self.role();
        let (in_key, stepped) = match role {
            Role::Key => {
                self.expect(Step::Opaque);
                (true, false)
            }
            Role::Root => (in_key, false),
            Role::Item(step) => {
                self.path.push(step);
                (in_key, true)
            }
        };
        let anchored = anchor > 0 && !in_key;
        if anchored {
            self.reading.push((anchor, self.path.len()));
        }
        self.open.push(Open {
            frame,
            in_key,
            stepped,
            anchor: anchored,
        });
    }

    fn end(&mut self) {
        if let Some(open) = self.open.pop() {
            if open.anchor {
                self.reading.pop();
            }
            if open.stepped {
                self.path.pop();
            }
        }
    }
}

impl EventReceiver for Walker {
    fn on_event(&mut self, event: Event) {
        if self.done {
            return;
        }
        match event {
            Event::DocumentEnd => self.done = true,
            Event::MappingStart(anchor, _) => self.start(Frame::Map(None), anchor),
            Event::SequenceStart(anchor, _) => self.start(Frame::Seq(0), anchor),
            Event::MappingEnd | Event::SequenceEnd => self.end(),
            Event::Scalar(text, style, anchor, tag) => {
                let in_key = self.in_key();
                match self.role() {
                    Role::Key => {
                        // A plain key as serde resolves it (`0x10` is 16, `True` true); a quoted
                        // one is its text.
                        let key = if style == TScalarStyle::Plain && tag.is_none() {
                            serde_yaml_ng::from_str(&text).unwrap_or(Value::String(text))
                        } else {
                            Value::String(text)
                        };
                        self.expect(Step::Key(key));
                    }
                    role => {
                        let stepped = match role {
                            Role::Item(step) => {
                                self.path.push(step);
                                true
                            }
                            _ => false,
                        };
                        let number = (style == TScalarStyle::Plain && tag.is_none() && !in_key)
                            .then(|| go_number(&text))
                            .flatten();
                        if anchor > 0 && !in_key {
                            self.reading.push((anchor, self.path.len()));
                        }
                        if let Some(number) = number {
                            self.record(number);
                        }
                        if anchor > 0 && !in_key {
                            self.reading.pop();
                        }
                        if stepped {
                            self.path.pop();
                        }
                    }
                }
            }
            Event::Alias(anchor) => {
                let in_key = self.in_key();
                match self.role() {
                    Role::Key => self.expect(Step::Opaque),
                    Role::Root => {}
                    Role::Item(step) if !in_key => {
                        self.path.push(step);
                        let copies = self.anchors.get(&anchor).cloned().unwrap_or_default();
                        let base = self.path.clone();
                        for (relative, number) in copies {
                            self.path.extend(relative);
                            self.record(number);
                            self.path.truncate(base.len());
                        }
                        self.path.pop();
                    }
                    Role::Item(_) => {}
                }
            }
            _ => {}
        }
    }
}

/// The node at `path` in serde's tree, if the path is certain there.
fn find<'v>(value: &'v mut Value, path: &[Step]) -> Option<&'v mut Value> {
    let mut node = value;
    for step in path {
        node = match (step, untag(node)) {
            (Step::Index(i), Value::Sequence(items)) => items.get_mut(*i)?,
            (Step::Key(key), Value::Mapping(entries)) => entries.get_mut(key)?,
            _ => return None,
        };
    }
    Some(untag(node))
}

/// The value under a tag.
fn untag(value: &mut Value) -> &mut Value {
    match value {
        Value::Tagged(tagged) => untag(&mut tagged.value),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> serde_json::Value {
        let mut value: Value = serde_yaml_ng::from_str(text).unwrap();
        go_numbers(text, &mut value);
        value.apply_merge().unwrap();
        serde_json::to_value(&value).unwrap()
    }

    #[test]
    fn go_reads_these_plain_scalars_as_numbers() {
        // go-yaml v2's resolve.go on each (ParseInt base 0 with underscores removed, then
        // ParseUint, then the float form); Go's JSON writes an integral float as an integer.
        for (text, json) in [
            ("0644", "420"),
            ("-0644", "-420"),
            ("+0644", "420"),
            ("00", "0"),
            ("0_1", "1"),
            ("1_000", "1000"),
            ("1_000.5", "1000.5"),
            ("08", "8"),
            ("09.5", "9.5"),
            ("0X1F", "31"),
            ("0O17", "15"),
            ("0B101", "5"),
            ("0x1F", "31"),
            ("0o17", "15"),
            ("0b101", "5"),
            ("-0b101", "-5"),
            ("18446744073709551615", "18446744073709551615"),
            ("-9223372036854775808", "-9223372036854775808"),
        ] {
            let number = go_number(text).unwrap_or_else(|| panic!("{text}"));
            assert_eq!(number.to_string(), json, "{text}");
        }
        for text in [
            "0x",
            "0b12",
            "0o8",
            "08:30",
            "2024-01-01",
            "1.2.3",
            "0644a",
            "_1",
            "yes",
            "on",
            ".5",
            "",
            "1e",
            "++1",
            "+-1",
            "0x_",
            "10.0.0.1",
        ] {
            assert!(
                go_number(text).is_none_or(|_| text == ".5"),
                "{text}: {:?}",
                go_number(text)
            );
        }
    }

    #[test]
    fn octal_modes_become_what_kubectl_sends() {
        let text = "spec:\n  volumes:\n  - configMap: {name: x, defaultMode: 0644}\n  - secret:\n      defaultMode: 0600\n      items: [0755, '0755', \"0755\", !!str 0755]\n";
        assert_eq!(
            read(text),
            serde_json::json!({"spec": {"volumes": [
                {"configMap": {"name": "x", "defaultMode": 420}},
                {"secret": {"defaultMode": 384, "items": [493, "0755", "0755", "0755"]}},
            ]}})
        );
    }

    #[test]
    fn anchors_aliases_and_merges_carry_the_number() {
        let text = "base: &b {mode: 0644, name: x}\none: *b\ntwo:\n  <<: *b\n  other: 1_0\nmode: &m 0600\nagain: *m\n";
        assert_eq!(
            read(text),
            serde_json::json!({
                "base": {"mode": 420, "name": "x"},
                "one": {"mode": 420, "name": "x"},
                "two": {"mode": 420, "name": "x", "other": 10},
                "mode": 384,
                "again": 384,
            })
        );
    }

    #[test]
    fn keys_and_complex_keys_are_left_alone() {
        let value = read("0644: a\nb: 0644\n");
        assert_eq!(value, serde_json::json!({"0644": "a", "b": 420}));
        // Keys serde reads as other values find their value all the same.
        let value = read("0x10: 0644\nTrue: 0644\n1.50: 0644\n'0x10': 0600\n");
        assert_eq!(
            value,
            serde_json::json!({"16": 420, "true": 420, "1.5": 420, "0x10": 384})
        );
        assert_eq!(read("m: &a 0644\nn: *a\n"), serde_json::json!({"m": 420, "n": 420}));
        // A key that is a collection (not JSON, but YAML): nothing inside it is a value, and the
        // value it keys is not rewritten.
        let text = "? [0644]\n: 0644\nc: 0644\n";
        let mut value: Value = serde_yaml_ng::from_str(text).unwrap();
        go_numbers(text, &mut value);
        let mapping = value.as_mapping().unwrap();
        assert_eq!(
            mapping.keys().next().unwrap(),
            &serde_yaml_ng::from_str::<Value>("['0644']").unwrap()
        );
        assert_eq!(mapping.values().next().unwrap(), &Value::String("0644".into()));
        assert_eq!(value["c"], Value::Number(420.into()));
    }

    #[test]
    fn documents_without_candidates_are_not_read_again() {
        assert!(!may_differ(
            "a: 1\nb: 10.0.0.1\nc: v1.05\nimage: nginx:1.07\nd: at 08:00 or 0644 mode\ne: |\n  set 0644 here\n"
        ));
        assert!(may_differ("mode: 0644\n"));
        assert!(may_differ("n: 1_000\n"));
        assert!(may_differ("n: [0X1F]\n"));
        assert!(may_differ("- -0644 # a mode\n"));
        assert!(may_differ("{a: 1, b: 0_1}\n"));
        assert!(may_differ("key:\n  0644\n"));
        assert!(may_differ("mode: &m 0644\n"));
        assert!(may_differ("- &m 0644\n"));
    }
}
