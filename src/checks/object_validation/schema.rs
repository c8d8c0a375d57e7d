//! A compiled OpenAPI v3 schema, as the API server validates with it: a CRD version's structural
//! schema (`spec.versions[*].schema.openAPIV3Schema`) or a built-in kind's schema from
//! Kubernetes' published OpenAPI v3 documents, whose `$ref: "#/components/schemas/<name>"`
//! (also inside `allOf: [{$ref: ...}]`) point into a components map.
//!
//! The schema is compiled once into an arena of [`SchemaNode`]s addressed by index: a `$ref` is
//! compiled once and shared, so a recursive schema (`JSONSchemaProps` refers to itself) stays
//! finite. What the validator needs is decided here: the formats the API server checks (its
//! `StripUnsupportedFormatsPostProcess` drops the others), the patterns compiled once, defaults
//! and enum values kept as owned JSON trees.
//!
//! The arena owns its data (a compiled schema outlives the request it was read from: a module
//! instance keeps it for the next objects of the same CRD), so defaults, enum values and the
//! `x-kubernetes-validations` rules are [`Node<'static>`] trees, the core's one JSON model.

use crate::json::{Node, Number};
use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

/// The JSON types a schema's `type` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Types(u8);

impl Types {
    /// `object`.
    pub const OBJECT: Types = Types(1);
    /// `array`.
    pub const ARRAY: Types = Types(2);
    /// `string`.
    pub const STRING: Types = Types(4);
    /// `integer`.
    pub const INTEGER: Types = Types(8);
    /// `number`.
    pub const NUMBER: Types = Types(16);
    /// `boolean`.
    pub const BOOLEAN: Types = Types(32);
    /// `null`.
    pub const NULL: Types = Types(64);

    /// The names in the order the schema gave them: kept for the message
    /// (`must be of type integer,string`).
    const NAMES: [(&'static str, Types); 7] = [
        ("object", Types::OBJECT),
        ("array", Types::ARRAY),
        ("string", Types::STRING),
        ("integer", Types::INTEGER),
        ("number", Types::NUMBER),
        ("boolean", Types::BOOLEAN),
        ("null", Types::NULL),
    ];

    /// The type called `name`.
    pub fn named(name: &str) -> Option<Types> {
        Types::NAMES.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// Whether no type is given (any value).
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Whether `other` is among them.
    pub fn contains(self, other: Types) -> bool {
        self.0 & other.0 != 0
    }

    /// Both.
    pub fn with(self, other: Types) -> Types {
        Types(self.0 | other.0)
    }
}

/// A string format the API server checks (`apiextensions-apiserver/pkg/apiserver/validation/
/// formats.go`, checked by kube-openapi's `strfmt` registry).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `bsonobjectid`.
    BsonObjectId,
    /// `uri`: what Go's `net/url.ParseRequestURI` reads ([`super::go_formats`]).
    Uri,
    /// `email`: what Go's `net/mail.ParseAddress` reads ([`super::go_formats`]).
    Email,
    /// `hostname`.
    Hostname,
    /// `ipv4`.
    Ipv4,
    /// `ipv6`.
    Ipv6,
    /// `cidr`.
    Cidr,
    /// `mac`.
    Mac,
    /// `uuid`.
    Uuid,
    /// `uuid3`.
    Uuid3,
    /// `uuid4`.
    Uuid4,
    /// `uuid5`.
    Uuid5,
    /// `isbn`: an ISBN-10 or an ISBN-13.
    Isbn,
    /// `isbn10`.
    Isbn10,
    /// `isbn13`.
    Isbn13,
    /// `creditcard`.
    CreditCard,
    /// `ssn`.
    Ssn,
    /// `rgbcolor`.
    RgbColor,
    /// `hexcolor`.
    HexColor,
    /// `byte` (base64).
    Byte,
    /// `password`: any string.
    Password,
    /// `date`.
    Date,
    /// `duration`.
    Duration,
    /// `datetime` (`date-time`).
    DateTime,
    /// `k8s-short-name` (Kubernetes 1.34 and later): a DNS-1123 label.
    K8sShortName,
    /// `k8s-long-name` (Kubernetes 1.34 and later): a DNS-1123 subdomain.
    K8sLongName,
}

impl Format {
    /// The format the API server checks for `format` on a schema of `types`, or none when it
    /// strips it (`StripUnsupportedFormatsPostProcessorForVersion`: only string formats are
    /// checked, named with or without `-`; integer and number formats are kept but never
    /// checked by the schema validator). `minor` is the Kubernetes minor version.
    pub fn of(format: &str, types: Types, minor: u32) -> Option<Format> {
        if !(types.is_empty() || types == Types::STRING) {
            return None;
        }
        let normalized = format.replace('-', "");
        Some(match normalized.as_str() {
            "bsonobjectid" => Format::BsonObjectId,
            "uri" => Format::Uri,
            "email" => Format::Email,
            "hostname" => Format::Hostname,
            "ipv4" => Format::Ipv4,
            "ipv6" => Format::Ipv6,
            "cidr" => Format::Cidr,
            "mac" => Format::Mac,
            "uuid" => Format::Uuid,
            "uuid3" => Format::Uuid3,
            "uuid4" => Format::Uuid4,
            "uuid5" => Format::Uuid5,
            "isbn" => Format::Isbn,
            "isbn10" => Format::Isbn10,
            "isbn13" => Format::Isbn13,
            "creditcard" => Format::CreditCard,
            "ssn" => Format::Ssn,
            "rgbcolor" => Format::RgbColor,
            "hexcolor" => Format::HexColor,
            "byte" => Format::Byte,
            "password" => Format::Password,
            "date" => Format::Date,
            "duration" => Format::Duration,
            "datetime" => Format::DateTime,
            "k8sshortname" if minor >= 34 => Format::K8sShortName,
            "k8slongname" if minor >= 34 => Format::K8sLongName,
            _ => return None,
        })
    }
}

/// A `pattern`, compiled once.
#[derive(Debug, Clone)]
pub struct Pattern {
    /// The pattern as the schema writes it (quoted in the message).
    pub source: String,
    /// The compiled expression, compiled when a value is first matched (most of a CRD's
    /// patterns are never reached by a given object, and compiling one costs more than
    /// reading its schema); none when [`go_regex`] cannot read a pattern Go's RE2 can (a
    /// pattern the API server cannot compile makes it refuse the CRD itself), and then the
    /// pattern is not checked: never a refusal the API server would not make.
    regex: std::cell::OnceCell<Option<regex_lite::Regex>>,
}

impl Pattern {
    /// A pattern of Go's `regexp` (RE2) dialect ([`go_regex`]), compiled at its first use.
    pub fn compile(source: &str) -> Pattern {
        Pattern {
            source: source.to_string(),
            regex: std::cell::OnceCell::new(),
        }
    }

    /// Whether `text` matches, or none when the pattern is not checked.
    pub fn matches(&self, text: &str) -> Option<bool> {
        self.regex
            .get_or_init(|| go_regex(&self.source).ok())
            .as_ref()
            .map(|regex| regex.is_match(text))
    }
}

/// Compiles a regular expression of Go's `regexp` (RE2) dialect, the schemas' `pattern`s and
/// CEL's `matches`, `find` and `findAll`, with `regex-lite` (the `regex` crate's Unicode tables
/// would cost a module hundreds of kilobytes). The two agree on syntax and semantics (no
/// backreferences or lookaround in either), and both read `\d`, `\w` and `\b` as ASCII, as
/// Go does; `\s`, which `regex-lite` widens with `\v`, is rewritten to Go's `[\t\n\f\r ]`.
/// What `regex-lite` cannot read is an error, never a different answer: Unicode classes
/// (`\pL`, `\p{Greek}`), Go's `\C` and `\Q...\E`, and a case-insensitive pattern with
/// non-ASCII text (Go folds Unicode case, `regex-lite` only ASCII). The pattern is read once
/// ([`scan`]), for its rewriting and for Go's parser's verdict ([`go_regex_error`]).
pub fn go_regex(source: &str) -> Result<regex_lite::Regex, String> {
    let scanned = scan(source);
    let translated = scanned.translated?;
    if !source.is_ascii() && scanned.case_insensitive {
        return Err("a case-insensitive pattern with non-ASCII text (Unicode case folding)".to_owned());
    }
    regex_lite::Regex::new(&translated).map_err(|e| e.to_string())
}

/// Go's `regexp.Compile` error for `source` (`error parsing regexp: <code>: `<expr>``), emulating
/// the first error of Go's `regexp/syntax` parser (`parse.go`, Perl flags) as it reads left to
/// right: lookarounds and other unsupported groups, bad named captures, backreferences and other
/// invalid escapes, missing or unexpected brackets and parentheses, invalid character class
/// ranges and POSIX classes, invalid repeat counts, nested or argumentless repetitions and a
/// trailing backslash. None when Go compiles it, and whenever the answer is not certain: a
/// Unicode class (`\p{...}`, whose names depend on Go's tables), a counted repetition of a group
/// (Go bounds the repetitions nested in it), patterns long or repeated enough to reach Go's
/// size limits.
pub fn go_regex_error(source: &str) -> Option<String> {
    match scan(source).verdict {
        GoVerdict::Refused((code, expr)) => Some(format!("error parsing regexp: {code}: `{expr}`")),
        GoVerdict::Compiles | GoVerdict::Unsure => None,
    }
}

/// What Go's parser makes of a pattern.
enum GoVerdict<'s> {
    /// It compiles.
    Compiles,
    /// Its first error.
    Refused(GoParseError<'s>),
    /// Not certain.
    Unsure,
}

/// One read of a pattern ([`scan`]).
struct Scanned<'s> {
    /// Go's parser's verdict.
    verdict: GoVerdict<'s>,
    /// The pattern as `regex-lite` reads it as Go does (`\s` and `\S` rewritten), or why there is
    /// none (Go refuses it, or `regex-lite` cannot read it the same).
    translated: Result<String, String>,
    /// Whether a flag group sets `i`.
    case_insensitive: bool,
}

/// Reads `source` once, as Go's `regexp/syntax` parser reads it left to right: its verdict
/// (stopping at the first error; where that error cannot be told for certain, the verdict is
/// unsure and the reading goes on for the rewriting), and the rewriting for `regex-lite`.
fn scan(source: &str) -> Scanned<'_> {
    let mut out = String::with_capacity(source.len() + 16);
    let mut unsure = source.len() > 1000;
    let mut case_insensitive = false;
    /// Go's first error, or an unsure verdict past a point not followed.
    fn refused(error: GoParseError<'_>, unsure: bool, case_insensitive: bool) -> Scanned<'_> {
        Scanned {
            verdict: if unsure {
                GoVerdict::Unsure
            } else {
                GoVerdict::Refused(error)
            },
            translated: Err(format!("error parsing regexp: {}: `{}`", error.0, error.1)),
            case_insensitive,
        }
    }
    let unreadable = |why: &str, case_insensitive: bool| Scanned {
        verdict: GoVerdict::Unsure,
        translated: Err(why.to_owned()),
        case_insensitive,
    };
    let mut t = source;
    let mut depth = 0usize;
    // Whether the top of Go's parse stack is an expression (not a `(` or `|`, nor empty).
    let mut operand = false;
    let mut operand_is_group = false;
    // Whether that expression is a repetition (which a flag group or an empty `\Q\E` after it
    // leaves on the stack, hiding it from the nesting check).
    let mut operand_is_repeat = false;
    let mut last_repeat: Option<&str> = None;
    let mut repeated = 0i64;
    while let Some(c) = t.chars().next() {
        let mut repeat = None;
        let mut group = false;
        let mut is_repeat = false;
        let before = t;
        match c {
            '(' if t.starts_with("(?") => match perl_flags(t) {
                Ok((rest, opens, sets_i)) => {
                    case_insensitive |= sets_i;
                    if opens {
                        depth += 1;
                        operand = false;
                    }
                    t = rest;
                    // A flag setting pushes nothing: the operand stays.
                    group = operand_is_group && !opens;
                    is_repeat = operand_is_repeat && !opens;
                }
                Err(error) => return refused(error, unsure, case_insensitive),
            },
            '(' => {
                depth += 1;
                operand = false;
                t = &t[1..];
            }
            '|' => {
                operand = false;
                t = &t[1..];
            }
            ')' => {
                if depth == 0 {
                    return refused(("unexpected )", source), unsure, case_insensitive);
                }
                depth -= 1;
                operand = true;
                group = true;
                t = &t[1..];
            }
            '[' => match go_class(t, &mut out) {
                Ok(rest) => {
                    operand = true;
                    t = rest;
                    // Written by the class.
                    operand_is_group = false;
                    operand_is_repeat = false;
                    last_repeat = None;
                    continue;
                }
                Err(Some(error)) => return refused(error, unsure, case_insensitive),
                Err(None) => return unreadable("a Unicode class", case_insensitive),
            },
            '*' | '+' | '?' | '{' => {
                let mut after = &t[1..];
                if c == '{' {
                    match repeat_counts(t) {
                        None => {
                            // Not a repetition: a literal `{`.
                            operand = true;
                            t = after;
                            last_repeat = None;
                            operand_is_group = false;
                            out.push('{');
                            continue;
                        }
                        Some((min, max, rest)) => {
                            after = rest;
                            if !(0..=1000).contains(&min) || max > 1000 || (max >= 0 && min > max) {
                                let error = ("invalid repeat count", &before[..before.len() - after.len()]);
                                return refused(error, unsure, case_insensitive);
                            }
                            // Go's repeat-size check of a group or a repetition, after the nesting
                            // check: not followed here.
                            if (min >= 2 || max >= 2)
                                && (operand_is_group || operand_is_repeat)
                                && last_repeat.is_none()
                            {
                                unsure = true;
                            }
                            repeated += min.max(max);
                            if repeated > 1000 {
                                unsure = true;
                            }
                        }
                    }
                }
                let after = after.strip_prefix('?').unwrap_or(after);
                if let Some(last) = last_repeat {
                    let error = ("invalid nested repetition operator", &last[..last.len() - after.len()]);
                    return refused(error, unsure, case_insensitive);
                }
                if !operand {
                    let error = (
                        "missing argument to repetition operator",
                        &before[..before.len() - after.len()],
                    );
                    return refused(error, unsure, case_insensitive);
                }
                repeat = Some(before);
                group = operand_is_group;
                is_repeat = true;
                t = after;
            }
            '\\' => {
                let second = t[1..].chars().next();
                match second {
                    Some('A' | 'b' | 'B' | 'z' | 'd' | 'D' | 's' | 'S' | 'w' | 'W') => {
                        operand = true;
                        t = &t[2..];
                        // Go's `\s` has no `\v`; regex-lite's has.
                        let rewritten = match second {
                            Some('s') => "[\\t\\n\\f\\r ]",
                            Some('S') => "[^\\t\\n\\f\\r ]",
                            _ => &before[..2],
                        };
                        out.push_str(rewritten);
                        operand_is_group = false;
                        operand_is_repeat = false;
                        last_repeat = None;
                        continue;
                    }
                    Some('C') => return refused(("invalid escape sequence", "\\C"), unsure, case_insensitive),
                    Some('Q') => {
                        let rest = &t[2..];
                        let (literal, after) = rest.split_once("\\E").unwrap_or((rest, ""));
                        operand = operand || !literal.is_empty();
                        // An empty one pushes nothing: the operand stays.
                        group = operand_is_group && literal.is_empty();
                        is_repeat = operand_is_repeat && literal.is_empty();
                        t = after;
                        // regex-lite has no `\Q...\E`: written as it is, which it refuses.
                    }
                    Some('p' | 'P') => return unreadable("a Unicode class", case_insensitive),
                    _ => match go_escape(t) {
                        Ok((_, rest)) => {
                            operand = true;
                            t = rest;
                        }
                        Err(error) => return refused(error, unsure, case_insensitive),
                    },
                }
            }
            c => {
                operand = true;
                t = &t[c.len_utf8()..];
            }
        }
        out.push_str(&before[..before.len() - t.len()]);
        operand_is_group = group;
        operand_is_repeat = is_repeat;
        last_repeat = repeat;
    }
    if depth > 0 {
        return refused(("missing closing )", source), unsure, case_insensitive);
    }
    Scanned {
        verdict: if unsure { GoVerdict::Unsure } else { GoVerdict::Compiles },
        translated: Ok(out),
        case_insensitive,
    }
}

/// A Go parse error: its code and the text it quotes.
type GoParseError<'s> = (&'static str, &'s str);

/// `parsePerlFlags` on `t` (which starts with `(?`): the rest, whether a group opens and whether
/// it sets `i`, or the error.
fn perl_flags(t: &str) -> Result<(&str, bool, bool), GoParseError<'_>> {
    let named_p = t.len() > 4 && t[2..].starts_with("P<");
    let named = t.len() > 3 && t[2..].starts_with('<');
    if named_p || named {
        let begins = if named_p { 4 } else { 3 };
        let Some(end) = t.find('>') else {
            return Err(("invalid named capture", t));
        };
        let name = &t[begins..end];
        if name.is_empty() || !name.chars().all(|c| c == '_' || c.is_ascii_alphanumeric()) {
            return Err(("invalid named capture", &t[..=end]));
        }
        return Ok((&t[end + 1..], true, false));
    }
    let mut rest = &t[2..];
    let mut negated = false;
    let mut saw_flag = false;
    let mut sets_i = false;
    while let Some(c) = rest.chars().next() {
        rest = &rest[c.len_utf8()..];
        match c {
            'i' | 'm' | 's' | 'U' => {
                saw_flag = true;
                sets_i |= c == 'i' && !negated;
            }
            '-' if !negated => {
                negated = true;
                saw_flag = false;
            }
            ':' | ')' if !negated || saw_flag => return Ok((rest, c == ':', sets_i)),
            _ => break,
        }
    }
    Err(("invalid or unsupported Perl syntax", &t[..t.len() - rest.len()]))
}

/// `parseRepeat`: `{min}`, `{min,}` (max -1) or `{min,max}` at the start of `t`, a number past
/// 10^8 read as -1; none when `t` is no repetition (a literal `{`).
fn repeat_counts(t: &str) -> Option<(i64, i64, &str)> {
    let number = |s: &str| -> Option<(i64, usize)> {
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || (digits >= 2 && s.starts_with('0')) {
            return None;
        }
        let mut n: i64 = 0;
        for b in s[..digits].bytes() {
            if n >= 100_000_000 {
                n = -1;
                break;
            }
            n = n * 10 + i64::from(b - b'0');
        }
        Some((n, digits))
    };
    let s = t.strip_prefix('{')?;
    let (mut min, used) = number(s)?;
    let mut s = &s[used..];
    let max;
    if let Some(rest) = s.strip_prefix(',') {
        if rest.starts_with('}') {
            max = -1;
            s = rest;
        } else {
            let (n, used) = number(rest)?;
            max = n;
            if n < 0 {
                min = -1;
            }
            s = &rest[used..];
        }
    } else {
        if s.is_empty() {
            return None;
        }
        max = min;
    }
    let rest = s.strip_prefix('}')?;
    Some((min, max, rest))
}

/// `parseEscape` on `t` (which starts with `\`): the character and the rest, or the error.
fn go_escape(t: &str) -> Result<(u32, &str), GoParseError<'_>> {
    let mut rest = &t[1..];
    let Some(c) = rest.chars().next() else {
        return Err(("trailing backslash at end of expression", ""));
    };
    rest = &rest[c.len_utf8()..];
    let octal = |s: &str| s.as_bytes().first().is_some_and(|b| (b'0'..=b'7').contains(b));
    // The escape read so far, up to `rest`.
    let invalid = |rest: &str| Err(("invalid escape sequence", &t[..t.len() - rest.len()]));
    match c {
        '1'..='7' if !octal(rest) => invalid(rest),
        '0'..='7' => {
            let mut value = c as u32 - '0' as u32;
            for _ in 1..3 {
                if !octal(rest) {
                    break;
                }
                value = value * 8 + u32::from(rest.as_bytes()[0] - b'0');
                rest = &rest[1..];
            }
            Ok((value, rest))
        }
        'x' => {
            let Some(first) = rest.chars().next() else {
                return invalid(rest);
            };
            rest = &rest[first.len_utf8()..];
            if first == '{' {
                let (mut value, mut digits) = (0u32, 0);
                loop {
                    let Some(c) = rest.chars().next() else {
                        return invalid(rest);
                    };
                    rest = &rest[c.len_utf8()..];
                    if c == '}' {
                        break;
                    }
                    let Some(v) = c.to_digit(16) else {
                        return invalid(rest);
                    };
                    value = value * 16 + v;
                    if value > 0x10FFFF {
                        return invalid(rest);
                    }
                    digits += 1;
                }
                if digits == 0 {
                    return invalid(rest);
                }
                return Ok((value, rest));
            }
            let second = rest.chars().next();
            if let Some(second) = second {
                rest = &rest[second.len_utf8()..];
            }
            match (first.to_digit(16), second.and_then(|c| c.to_digit(16))) {
                (Some(x), Some(y)) => Ok((x * 16 + y, rest)),
                _ => invalid(rest),
            }
        }
        'a' => Ok((7, rest)),
        'f' => Ok((12, rest)),
        'n' => Ok((10, rest)),
        'r' => Ok((13, rest)),
        't' => Ok((9, rest)),
        'v' => Ok((11, rest)),
        c if c.is_ascii() && !c.is_ascii_alphanumeric() => Ok((c as u32, rest)),
        _ => invalid(rest),
    }
}

/// The POSIX classes Go knows (`posixGroup`).
const POSIX_CLASSES: [&str; 14] = [
    "alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "word",
    "xdigit",
];

/// `parseClass` on `t` (which starts with `[`): the rest after the class, or the error (none
/// when not certain: a Unicode class). The class is written to `out` as `regex-lite` reads it
/// as Go does (`\s` rewritten to Go's `\t\n\f\r `).
fn go_class<'s>(t: &'s str, out: &mut String) -> Result<&'s str, Option<GoParseError<'s>>> {
    let mut rest = &t[1..];
    if let Some(after) = rest.strip_prefix('^') {
        rest = after;
    }
    out.push_str(&t[..t.len() - rest.len()]);
    /// `parseClassChar`: a character of the class (`whole`) at the start of `s`.
    fn class_char<'s>(s: &'s str, whole: &'s str) -> Result<(u32, &'s str), Option<GoParseError<'s>>> {
        match s.chars().next() {
            None => Err(Some(("missing closing ]", whole))),
            Some('\\') => go_escape(s).map_err(Some),
            Some(c) => Ok((c as u32, &s[c.len_utf8()..])),
        }
    }
    let mut first = true;
    loop {
        if !first && let Some(after) = rest.strip_prefix(']') {
            out.push(']');
            return Ok(after);
        }
        first = false;
        if rest.len() > 2
            && rest.starts_with("[:")
            && let Some(i) = rest[2..].find(":]")
        {
            let name = &rest[..i + 4];
            let inner = &name[2..name.len() - 2];
            if !POSIX_CLASSES.contains(&inner.strip_prefix('^').unwrap_or(inner)) {
                return Err(Some(("invalid character class range", name)));
            }
            out.push_str(name);
            rest = &rest[i + 4..];
            continue;
        }
        if rest.starts_with("\\p") || rest.starts_with("\\P") {
            return Err(None);
        }
        if rest.len() >= 2
            && rest.starts_with('\\')
            && matches!(rest.as_bytes()[1], b'd' | b'D' | b's' | b'S' | b'w' | b'W')
        {
            // Go's `\s` has no `\v`; regex-lite's has.
            out.push_str(if rest.as_bytes()[1] == b's' {
                "\\t\\n\\f\\r "
            } else {
                &rest[..2]
            });
            rest = &rest[2..];
            continue;
        }
        let range = rest;
        let (low, after) = class_char(rest, t)?;
        rest = after;
        if rest.len() >= 2 && rest.starts_with('-') && !rest[1..].starts_with(']') {
            let (high, after) = class_char(&rest[1..], t)?;
            rest = after;
            if high < low {
                return Err(Some((
                    "invalid character class range",
                    &range[..range.len() - rest.len()],
                )));
            }
        }
        out.push_str(&range[..range.len() - rest.len()]);
    }
}

/// `additionalProperties`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Additional {
    /// Not given.
    #[default]
    Unset,
    /// `true` or `false`.
    Allows(bool),
    /// A schema for every other key.
    Schema(usize),
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// `atomic`.
    Atomic,
    /// `set`: items unique.
    Set,
    /// `map`: items unique by their `x-kubernetes-list-map-keys`.
    Map,
}

/// One schema of the arena.
#[derive(Debug, Clone, Default)]
pub struct SchemaNode {
    /// `type` (empty: any); `x-kubernetes-int-or-string` makes it `integer` and `string`.
    pub types: Types,
    /// The type names as the message joins them (`integer,string`).
    pub type_names: String,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `nullable`.
    pub nullable: bool,
    /// `format`, as written.
    pub format_name: String,
    /// The format checked, if the API server checks it.
    pub format: Option<Format>,
    /// `enum`.
    pub enum_values: Option<Vec<Node<'static>>>,
    /// `default`.
    pub default: Option<Node<'static>>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`.
    pub pattern: Option<Pattern>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `properties`, sorted by name.
    pub properties: Vec<(String, usize)>,
    /// `additionalProperties`.
    pub additional_properties: Additional,
    /// `items` (a single schema; a tuple's schemas are not used by Kubernetes).
    pub items: Option<usize>,
    /// `allOf`.
    pub all_of: Vec<usize>,
    /// `anyOf`.
    pub any_of: Vec<usize>,
    /// `oneOf`.
    pub one_of: Vec<usize>,
    /// `not`.
    pub not: Option<usize>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`granular` or `atomic`: it changes how apply merges, not what
    /// validates).
    pub map_type: Option<String>,
    /// `x-kubernetes-validations`, the CEL rules, kept whole for the CEL library.
    pub validations: Option<Node<'static>>,
    /// The node this one stands for (`allOf: [{$ref: ...}]` alone): everything but its own
    /// `default` and `nullable` is the other node's.
    pub alias: Option<usize>,
    /// A `$ref` of a schema compiled with deferred definitions ([`Schema::compile_deferred`]),
    /// or a sub-schema of one compiled part by part ([`Schema::compile_parts`]): the node stands
    /// for the definition or the part, compiled when first resolved.
    pub deferred: Option<Deferred>,
    /// Why the part this node stands in for could not be compiled ([`Schema::compile_parts`]):
    /// the node accepts anything, and the validation that reaches it says the schema unreadable.
    pub unreadable: Option<Box<SchemaError>>,
}

/// A `$ref` to a definition compiled at its first resolution ([`Schema::resolve`]), once per
/// schema: a kind's root reaches far more definitions than an object's fields do.
#[derive(Debug, Clone, Default)]
pub struct Deferred {
    /// The definition's name (without `#/components/schemas/`), or the part's JSON path in the
    /// schema.
    name: String,
    /// A part's place in the schema's text ([`Schema::compile_parts`]); none for a definition.
    part: Option<Part>,
    /// The index of its compiled node, once compiled.
    target: std::cell::OnceCell<usize>,
}

/// A sub-schema of a schema compiled part by part: its bytes in the schema's text and its
/// nesting level (the schema's root is level 1).
#[derive(Debug, Clone, Copy, Default)]
struct Part {
    start: usize,
    end: usize,
    level: usize,
}

impl SchemaNode {
    /// The schema of property `name`.
    pub fn property(&self, name: &str) -> Option<usize> {
        self.properties
            .binary_search_by(|(key, _)| key.as_str().cmp(name))
            .ok()
            .map(|i| self.properties[i].1)
    }

    /// Whether the schema says anything of an object's keys (properties, additional properties
    /// or unknown fields kept): a schema that says nothing keeps no key but its known ones.
    pub fn declares_fields(&self) -> bool {
        !self.properties.is_empty() || self.additional_properties != Additional::Unset || self.preserve_unknown_fields
    }
}

/// A schema that cannot be read: where (the JSON path in the schema) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaError {
    /// The JSON path of the offending keyword, e.g. `properties.spec.properties.replicas.type`.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SchemaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A compiled schema: the arena and its root.
///
/// The arena is one store of nodes, numbered in the order they were compiled: those compiled
/// with the schema (a CRD's whole schema, a built-in kind's root) first, then those a schema
/// with deferred parts ([`Schema::compile_deferred`]) compiles when a reference to them is
/// first resolved. It grows while the validation walk holds `&SchemaNode`s of the arena
/// (through `&Schema`): it is elsa's `FrozenVec` of boxes, an append-only vector whose pushes
/// take `&self` and whose boxed nodes never move, so borrows of them outlive the pushes without
/// unsafe code of ours (`typed-arena` allocates behind `&self` too, but cannot find a node again
/// by its index, which every reference of the arena is).
pub struct Schema {
    /// Every node compiled so far, by index; `$ref`s share theirs.
    nodes: elsa::FrozenVec<Box<SchemaNode>>,
    /// The root's index.
    pub root: usize,
    /// The CEL rules of the nodes that have `x-kubernetes-validations`, by node index (sorted:
    /// each compile's nodes are numbered after every node before them), each compiled when
    /// first asked for ([`Schema::rules_at`], [`Schema::rule_errors`]).
    rules: elsa::FrozenVec<Box<(usize, NodeRules)>>,
    /// Where the deferred definitions come from, for a schema that has them.
    definitions: Option<Definitions>,
    /// Whether the root is a resource's (CEL's `self` there has `apiVersion`, `kind` and
    /// `metadata`): not for a sub-schema compiled alone ([`Schema::compile_detached`]).
    resource_root: bool,
}

impl fmt::Debug for Schema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schema")
            .field("nodes", &self.nodes.iter().collect::<Vec<_>>())
            .field("root", &self.root)
            .finish_non_exhaustive()
    }
}

/// Reads a deferred definition by name (without `#/components/schemas/`), when a `$ref` to it
/// is first resolved ([`Schema::compile_deferred`]).
pub type ReadDefinition = Box<dyn Fn(&str) -> Option<Node<'static>> + Send>;

/// Where a schema's deferred parts are read from.
enum Source {
    /// The definition of a name, read when a `$ref` to it is first resolved
    /// ([`Schema::compile_deferred`]).
    Definitions(ReadDefinition),
    /// The schema's JSON text, each sub-schema read from it when first resolved
    /// ([`Schema::compile_parts`]), and the deepest level a part may nest to.
    Text(Box<str>, usize),
}

/// The source of a schema's deferred definitions or parts.
struct Definitions {
    /// Where they are read from.
    source: Source,
    /// The node of every `$ref` compiled so far, by reference (a [`Deferred`] node each).
    refs: std::cell::RefCell<HashMap<String, usize>>,
    /// The Kubernetes minor the schema is compiled for.
    minor: u32,
    /// How many definitions were compiled.
    compiled: std::cell::Cell<usize>,
}

/// One node's `x-kubernetes-validations`, compiled at most once: when a validation first
/// reaches the node, or when every rule of the schema is compiled to find those the CEL library
/// cannot compile ([`Schema::rule_errors`]). In a fresh module instance, compiling the rules is
/// the largest part of what a schema with rules costs to compile (the `cel` crate's parser is
/// slow to start: docs/benchmarks.md), and an object reaches few of its schema's nodes.
#[derive(Debug)]
struct NodeRules {
    /// The node's JSON path in the schema (its errors name it).
    path: String,
    /// The compiled rules, or the errors the API server would refuse the CRD with.
    compiled: std::cell::OnceCell<Result<super::cel::Rules, Vec<String>>>,
}

/// Where a schema's `$ref: "#/components/schemas/<name>"` point.
#[derive(Clone, Copy)]
pub enum Components<'c, 'j> {
    /// Nowhere (a CRD's schema has no references).
    None,
    /// The members of a `components.schemas` object.
    Object(&'c Node<'j>),
    /// A map of definitions by name (the built-in kinds' table).
    Map(&'c std::collections::BTreeMap<&'static str, Node<'static>>),
    /// The schema's deferred definitions ([`Schema::compile_deferred`]): a `$ref` compiles into
    /// a [`Deferred`] node, its definition read and compiled when the node is first resolved.
    Deferred,
    /// None, in a schema compiled part by part ([`Schema::compile_parts`]) from this text: a
    /// sub-schema left unread ([`Node::Raw`]) compiles into a [`Deferred`] part of it.
    Parts(&'c str),
}

impl<'c, 'j> Components<'c, 'j> {
    fn get(self, name: &str) -> Option<&'c Node<'j>> {
        match self {
            Components::None | Components::Deferred | Components::Parts(_) => None,
            Components::Object(node) => node.get(name),
            Components::Map(map) => map.get(name),
        }
    }
}

/// Most schema nodes one schema compiles into (a `$ref` counts once): beyond it the schema is
/// refused as unreadable rather than exhaust the module's memory.
pub const MAX_NODES: usize = 200_000;

impl Schema {
    /// Compiles `schema` (a CRD version's `openAPIV3Schema`, or a built-in kind's schema) for
    /// Kubernetes 1.`minor`; `components` is the `components.schemas` map its `$ref`s point into.
    pub fn compile(schema: &Node<'_>, components: Option<&Node<'_>>, minor: u32) -> Result<Schema, SchemaError> {
        let components = match components {
            Some(node) => Components::Object(node),
            None => Components::None,
        };
        Schema::compile_with(schema, components, minor)
    }

    /// [`Schema::compile`] of a sub-schema of a CRD version's schema, alone (a default's node
    /// and what is under it, for the default's validation): its root is no resource's root.
    pub fn compile_detached(schema: &Node<'_>, minor: u32) -> Result<Schema, SchemaError> {
        let mut compiled = Schema::compile(schema, None, minor)?;
        compiled.resource_root = false;
        Ok(compiled)
    }

    /// Whether node `index` is the resource's root (as CEL types `self`).
    pub fn is_resource_root(&self, index: usize) -> bool {
        self.resource_root && index == self.root
    }

    /// [`Schema::compile`] with `$ref`s into `components`, every definition the schema
    /// reaches compiled with it.
    pub fn compile_with(schema: &Node<'_>, components: Components<'_, '_>, minor: u32) -> Result<Schema, SchemaError> {
        let mut compiler = Compiler::new(0, HashMap::new(), components, minor);
        let root = compiler.compile(schema, &Path::Root(""))?;
        let schema = Schema {
            nodes: elsa::FrozenVec::new(),
            root,
            rules: elsa::FrozenVec::new(),
            definitions: None,
            resource_root: true,
        };
        schema.keep(compiler);
        Ok(schema)
    }

    /// [`Schema::compile`] of a schema whose `$ref: "#/components/schemas/<name>"` point into
    /// definitions that `definitions` reads by name (a built-in kind's root and the table):
    /// only the schema itself is compiled now, each definition when a `$ref` to it is first
    /// resolved ([`Schema::resolve`], as the validation walk reaches it), once. What a node of
    /// the schema says of itself (its `default`, `nullable`, CEL rules) is in the node, so
    /// nothing reads a definition the walk does not go into. A definition that cannot be read
    /// or compiled (the built-in table has none: its tests compile every kind) stands for a
    /// schema that accepts anything, never a refusal.
    pub fn compile_deferred(schema: &Node<'_>, definitions: ReadDefinition, minor: u32) -> Result<Schema, SchemaError> {
        let mut compiler = Compiler::new(0, HashMap::new(), Components::Deferred, minor);
        let root = compiler.compile(schema, &Path::Root(""))?;
        let schema = Schema {
            nodes: elsa::FrozenVec::new(),
            root,
            rules: elsa::FrozenVec::new(),
            definitions: Some(Definitions {
                source: Source::Definitions(definitions),
                refs: std::cell::RefCell::new(std::mem::take(&mut compiler.refs)),
                minor,
                compiled: std::cell::Cell::new(0),
            }),
            resource_root: true,
        };
        schema.keep(compiler);
        Ok(schema)
    }

    /// [`Schema::compile`] of the schema whose JSON text is `text` (a CRD version's
    /// `openAPIV3Schema`), part by part: the root is read and compiled now, each of its
    /// sub-schemas (a property's, `items`, `additionalProperties`, `not`; `allOf`, `anyOf` and
    /// `oneOf` are compiled with their schema) read from the text and compiled when the validation first resolves it
    /// ([`Schema::resolve`]), its own sub-schemas in turn left for later, so an object pays for
    /// the nodes it reaches (their CEL rules are compiled only as it reaches them, as ever). A
    /// part's node keeps its own `default` and `nullable` ([`Schema::own`]). A part that cannot
    /// be read or compiled, or that nests deeper than `max_level` (the root is level 1), stands
    /// for a schema that accepts anything and says why ([`SchemaNode::unreadable`]), for the
    /// validations that reach it. Resolved everywhere, the schema is [`Schema::compile`]'s
    /// (numbered otherwise).
    pub fn compile_parts(text: &str, minor: u32, max_level: usize) -> Result<Schema, SchemaError> {
        let mut schema = Schema {
            nodes: elsa::FrozenVec::new(),
            root: 0,
            rules: elsa::FrozenVec::new(),
            definitions: Some(Definitions {
                source: Source::Text(text.into(), max_level),
                refs: std::cell::RefCell::new(HashMap::new()),
                minor,
                compiled: std::cell::Cell::new(0),
            }),
            resource_root: true,
        };
        let root = Part {
            start: 0,
            end: text.len(),
            level: 1,
        };
        schema.root = schema.compile_part(root, "")?;
        if let Some(definitions) = &schema.definitions {
            definitions.compiled.set(0);
        }
        Ok(schema)
    }

    /// Compiles the part `part` (at JSON path `path`) of a schema compiled part by part: its
    /// node's index.
    #[inline(never)]
    fn compile_part(&self, part: Part, path: &str) -> Result<usize, SchemaError> {
        let error = |message: String| SchemaError {
            path: path.to_string(),
            message,
        };
        let Some(Definitions {
            source: Source::Text(text, max_level),
            minor,
            compiled,
            ..
        }) = &self.definitions
        else {
            return Err(error("the schema has no text to read its parts from".to_string()));
        };
        compiled.set(compiled.get() + 1);
        let (node, depth) =
            crate::json::read_noting_depth(&text[part.start..part.end], crate::cluster::CrdPart::Schema, usize::MAX)
                .map_err(|e| error(format!("the schema is not JSON: {e}")))?;
        if part.level + depth > max_level + 1 {
            return Err(error("the schema nests too deep to be read".to_string()));
        }
        let mut compiler = Compiler::new(self.len(), HashMap::new(), Components::Parts(text), *minor);
        compiler.base_level = part.level;
        let compiled = compiler.compile(&node, &Path::Root(path));
        // Every node the compiler numbered is kept (one it left unfinished accepts anything).
        self.keep(compiler);
        compiled
    }

    /// The node whose own `default` and `nullable` are node `index`'s: the node itself, or the
    /// part it stands in for ([`Schema::compile_parts`]), compiled at the first call. (A `$ref`
    /// or an alias has its own.)
    pub fn own(&self, index: usize) -> &SchemaNode {
        let node = self.node(index);
        match &node.deferred {
            Some(deferred) if deferred.part.is_some() => self.node(self.definition(deferred)),
            _ => node,
        }
    }

    /// How many deferred definitions (or parts, the root aside) were compiled so far
    /// ([`Schema::compile_deferred`], [`Schema::compile_parts`]).
    pub fn definitions_compiled(&self) -> usize {
        self.definitions.as_ref().map_or(0, |d| d.compiled.get())
    }

    /// How many nodes the arena holds.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Moves the nodes `compiler` numbered from [`Schema::len`] into the arena, and their rules.
    fn keep(&self, mut compiler: Compiler<'_, '_>) {
        debug_assert_eq!(compiler.base, self.len());
        let rules = compiler.rules();
        for node in compiler.nodes {
            self.nodes.push(Box::new(node));
        }
        for rule in rules {
            self.rules.push(Box::new(rule));
        }
    }

    /// Whether the arena holds no node (never: a schema has its root).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The node of the definition a [`Deferred`] `$ref` names, compiled at the first call.
    fn definition(&self, deferred: &Deferred) -> usize {
        *deferred.target.get_or_init(|| {
            if let Some(part) = deferred.part {
                return self.compile_part(part, &deferred.name).unwrap_or_else(|error| {
                    let index = self.len();
                    self.nodes.push(Box::new(SchemaNode {
                        unreadable: Some(Box::new(error)),
                        ..SchemaNode::default()
                    }));
                    index
                });
            }
            self.compile_definition(&deferred.name).unwrap_or_else(|| {
                // Unreadable: a schema that accepts anything.
                let index = self.len();
                self.nodes.push(Box::default());
                index
            })
        })
    }

    /// Compiles the deferred definition `name` into the arena: its node's index.
    fn compile_definition(&self, name: &str) -> Option<usize> {
        let definitions = self.definitions.as_ref()?;
        let Source::Definitions(read) = &definitions.source else {
            return None;
        };
        let definition = read(name)?;
        definitions.compiled.set(definitions.compiled.get() + 1);
        // Compiling never resolves a reference, so nothing else borrows the map meanwhile.
        let mut refs = definitions.refs.borrow_mut();
        let mut compiler = Compiler::new(
            self.len(),
            std::mem::take(&mut *refs),
            Components::Deferred,
            definitions.minor,
        );
        let compiled = compiler.compile(&definition, &Path::Key(&Path::Root("components.schemas"), name));
        *refs = std::mem::take(&mut compiler.refs);
        // Every node the compiler numbered is kept (one it left unfinished accepts anything),
        // since the references it made point at them.
        self.keep(compiler);
        compiled.ok()
    }

    /// The JSON path in the schema of node `index`'s CEL rules (their errors name it), if it
    /// has any.
    pub fn rule_path(&self, index: usize) -> Option<&str> {
        self.node_rules(index).map(|rules| rules.path.as_str())
    }

    /// Whether node `index` itself (not the node it stands for) has CEL rules.
    pub fn has_rules(&self, index: usize) -> bool {
        self.node_rules(index).is_some()
    }

    /// The rules of node `index`.
    fn node_rules(&self, index: usize) -> Option<&NodeRules> {
        let at = self.rules.binary_search_by_key(&index, |(index, _)| *index).ok()?;
        self.rules.get(at).map(|(_, rules)| rules)
    }

    /// The CEL rules of node `index`, compiled once (at the first call), against the node they
    /// sit on; `Err` holds the API server's errors for rules the CEL library cannot compile,
    /// each at its path in the schema. None when the node has no rules.
    pub fn rules_at(&self, index: usize) -> Option<Result<&super::cel::Rules, &[String]>> {
        let rules = self.node_rules(index)?;
        let compiled = rules.compiled.get_or_init(|| {
            let validations = self.node(index).validations.as_ref().unwrap_or(&Node::Null);
            let view = View::new(self, index, self.is_resource_root(index));
            super::cel::Rules::compile(validations, view).map_err(|errors| {
                errors
                    .into_iter()
                    .map(|error| {
                        if rules.path.is_empty() {
                            error
                        } else {
                            format!("{}.{error}", rules.path)
                        }
                    })
                    .collect()
            })
        });
        Some(compiled.as_ref().map_err(Vec::as_slice))
    }

    /// Every rule of the schema compiled ([`Schema::rules_at`]), and the errors of those the
    /// CEL library cannot compile, in the order of their nodes: what the API server would refuse
    /// the CRD for, wherever the rules sit (of a schema with deferred definitions, those of the
    /// definitions compiled so far).
    pub fn rule_errors(&self) -> Vec<String> {
        self.rule_errors_of(self.rules.iter().map(|(index, _)| *index).collect())
    }

    /// The errors of the rules of nodes `indexes` that do not compile, in the order of their
    /// nodes (each node's once), compiling them if need be.
    pub fn rule_errors_of(&self, mut indexes: Vec<usize>) -> Vec<String> {
        indexes.sort_unstable();
        indexes.dedup();
        indexes
            .into_iter()
            .filter_map(|index| self.rules_at(index)?.err())
            .flat_map(|errors| errors.iter().cloned())
            .collect()
    }

    /// The node at `index` (a [`Deferred`] reference as itself: see [`Schema::resolved`]).
    pub fn node(&self, index: usize) -> &SchemaNode {
        &self.nodes[index]
    }

    /// The root node.
    pub fn root_node(&self) -> &SchemaNode {
        self.resolved(self.root)
    }

    /// The index of the node `index` stands for (itself unless it is an alias or a deferred
    /// reference, whose definition this compiles the first time).
    pub fn resolve(&self, mut index: usize) -> usize {
        // Aliases of aliases are few; a cycle of them (a schema that is only itself) stops.
        for _ in 0..32 {
            let node = self.node(index);
            match (node.alias, &node.deferred) {
                (Some(target), _) => index = target,
                (None, Some(deferred)) => index = self.definition(deferred),
                (None, None) => break,
            }
        }
        index
    }

    /// The node `index` stands for.
    pub fn resolved(&self, index: usize) -> &SchemaNode {
        self.node(self.resolve(index))
    }
}

struct Compiler<'c, 'j> {
    /// The nodes compiled, numbered from `base`.
    nodes: Vec<SchemaNode>,
    /// The index of the first of `nodes` in the arena.
    base: usize,
    /// The JSON path in the schema of each node with CEL rules (their errors name it).
    rule_paths: Vec<(usize, String)>,
    refs: HashMap<String, usize>,
    components: Components<'c, 'j>,
    minor: u32,
    /// The nesting level of the schema compiled (the root of a schema compiled part by part is
    /// level 1).
    base_level: usize,
}

const REF_PREFIX: &str = "#/components/schemas/";

impl<'c, 'j> Compiler<'c, 'j> {
    fn new(base: usize, refs: HashMap<String, usize>, components: Components<'c, 'j>, minor: u32) -> Self {
        Compiler {
            nodes: Vec::new(),
            base,
            rule_paths: Vec::new(),
            refs,
            components,
            minor,
            base_level: 1,
        }
    }

    /// The rules of the nodes compiled, by node index, sorted.
    fn rules(&mut self) -> Vec<(usize, NodeRules)> {
        let mut rules: Vec<(usize, NodeRules)> = std::mem::take(&mut self.rule_paths)
            .into_iter()
            .map(|(index, path)| {
                let compiled = std::cell::OnceCell::new();
                (index, NodeRules { path, compiled })
            })
            .collect();
        rules.sort_unstable_by_key(|(index, _)| *index);
        rules
    }

    /// The index the next node compiled takes.
    fn next(&self) -> usize {
        self.base + self.nodes.len()
    }

    fn error(path: &Path<'_>, message: impl Into<String>) -> SchemaError {
        SchemaError {
            path: path.to_string(),
            message: message.into(),
        }
    }

    /// Compiles the schema at `path`, its index.
    #[inline(never)]
    fn compile(&mut self, schema: &Node<'_>, path: &Path<'_>) -> Result<usize, SchemaError> {
        if let Node::Raw(raw) = schema {
            let text = raw.get();
            if let Components::Parts(whole) = self.components
                && text.starts_with('{')
            {
                // A part, compiled when first resolved.
                if self.next() >= MAX_NODES {
                    return Err(Compiler::error(
                        path,
                        format!("the schema has more than {MAX_NODES} nodes"),
                    ));
                }
                let start = text.as_ptr() as usize - whole.as_ptr() as usize;
                let index = self.next();
                self.nodes.push(SchemaNode {
                    deferred: Some(Deferred {
                        name: path.to_string(),
                        part: Some(Part {
                            start,
                            end: start + text.len(),
                            level: self.base_level + path.steps(),
                        }),
                        target: std::cell::OnceCell::new(),
                    }),
                    ..SchemaNode::default()
                });
                return Ok(index);
            }
            // Not a schema object: read as it is, for the compiler's own error.
            let read = unraw(raw, path)?;
            return self.compile(&read, path);
        }
        let entries = match schema {
            Node::Object(entries) => entries,
            Node::TooDeep => return Err(Compiler::error(path, "the schema nests too deep to be read")),
            _ => return Err(Compiler::error(path, "a schema must be an object")),
        };
        if self.next() >= MAX_NODES {
            return Err(Compiler::error(
                path,
                format!("the schema has more than {MAX_NODES} nodes"),
            ));
        }
        // A `$ref` alone (as Kubernetes' documents write it, or with a description beside it).
        if let Some(reference) = schema.get("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(Compiler::error(&Path::Key(path, "$ref"), "must be a string"));
            };
            return self.reference(reference, &Path::Key(path, "$ref"));
        }
        let index = self.next();
        self.nodes.push(SchemaNode::default());
        let mut node = SchemaNode::default();
        let mut int_or_string = false;
        let mut format_name = String::new();
        for (key, value) in entries.iter() {
            let at = Path::Key(path, key);
            // A part's `additionalProperties`, `items` or `not` left unread (a schema is compiled
            // when first resolved; a boolean or a tuple is read now).
            let read;
            let value = match value {
                Node::Raw(raw) if !raw.get().starts_with('{') => {
                    read = unraw(raw, &at)?;
                    &read
                }
                _ => value,
            };
            match key.as_ref() {
                "type" => {
                    let names: Vec<&str> = match value {
                        Node::Str(s) => vec![s.as_ref()],
                        Node::Array(items) => items.iter().filter_map(Node::as_str).collect(),
                        _ => return Err(Compiler::error(&at, "must be a string")),
                    };
                    for name in &names {
                        match Types::named(name) {
                            Some(t) => node.types = node.types.with(t),
                            None if name.is_empty() => {}
                            None => return Err(Compiler::error(&at, format!("unknown type {name:?}"))),
                        }
                    }
                    node.type_names = names.join(",");
                }
                "x-kubernetes-int-or-string" => int_or_string = bool_of(value, &at)?,
                "nullable" => node.nullable = bool_of(value, &at)?,
                "format" => format_name = string_of(value, &at)?.to_string(),
                "enum" => match value {
                    Node::Array(items) => node.enum_values = Some(items.iter().map(owned).collect()),
                    Node::Null => {}
                    _ => return Err(Compiler::error(&at, "must be an array")),
                },
                "default" => node.default = Some(owned(value)),
                "maximum" => node.maximum = Some(number_of(value, &at)?),
                "minimum" => node.minimum = Some(number_of(value, &at)?),
                "multipleOf" => node.multiple_of = Some(number_of(value, &at)?),
                "exclusiveMaximum" => node.exclusive_maximum = bool_of(value, &at)?,
                "exclusiveMinimum" => node.exclusive_minimum = bool_of(value, &at)?,
                "maxLength" => node.max_length = Some(integer_of(value, &at)?),
                "minLength" => node.min_length = Some(integer_of(value, &at)?),
                "maxItems" => node.max_items = Some(integer_of(value, &at)?),
                "minItems" => node.min_items = Some(integer_of(value, &at)?),
                "maxProperties" => node.max_properties = Some(integer_of(value, &at)?),
                "minProperties" => node.min_properties = Some(integer_of(value, &at)?),
                "uniqueItems" => node.unique_items = bool_of(value, &at)?,
                "pattern" => node.pattern = Some(Pattern::compile(string_of(value, &at)?)),
                "required" => match value {
                    Node::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            node.required.push(string_of(item, &Path::Index(&at, i))?.to_string());
                        }
                    }
                    Node::Null => {}
                    _ => return Err(Compiler::error(&at, "must be an array of strings")),
                },
                "properties" => {
                    let Some(members) = value.as_object() else {
                        if value.is_null() {
                            continue;
                        }
                        return Err(Compiler::error(&at, "must be an object"));
                    };
                    let mut properties = Vec::with_capacity(members.len());
                    for (name, property) in members.iter() {
                        let sub = Path::Key(&at, name);
                        properties.push((name.to_string(), self.compile(property, &sub)?));
                    }
                    properties.sort_by(|a, b| a.0.cmp(&b.0));
                    properties.dedup_by(|later, earlier| {
                        if later.0 == earlier.0 {
                            earlier.1 = later.1;
                            true
                        } else {
                            false
                        }
                    });
                    node.properties = properties;
                }
                "additionalProperties" => {
                    node.additional_properties = match value {
                        Node::Bool(b) => Additional::Allows(*b),
                        Node::Null => Additional::Unset,
                        _ => Additional::Schema(self.compile(value, &at)?),
                    }
                }
                "items" => match value {
                    Node::Array(schemas) => {
                        // A tuple: its first schema stands for every item (the API server
                        // refuses tuples in a CRD; no built-in kind has one).
                        if let Some(first) = schemas.first() {
                            node.items = Some(self.compile(first, &Path::Index(&at, 0))?);
                        }
                    }
                    Node::Null => {}
                    _ => node.items = Some(self.compile(value, &at)?),
                },
                "allOf" | "anyOf" | "oneOf" => {
                    let Node::Array(schemas) = value else {
                        if value.is_null() {
                            continue;
                        }
                        return Err(Compiler::error(&at, "must be an array of schemas"));
                    };
                    let mut compiled = Vec::with_capacity(schemas.len());
                    for (i, sub) in schemas.iter().enumerate() {
                        compiled.push(self.compile(sub, &Path::Index(&at, i))?);
                    }
                    match key.as_ref() {
                        "allOf" => node.all_of = compiled,
                        "anyOf" => node.any_of = compiled,
                        _ => node.one_of = compiled,
                    }
                }
                "not" => node.not = Some(self.compile(value, &at)?),
                "x-kubernetes-preserve-unknown-fields" => node.preserve_unknown_fields = bool_of(value, &at)?,
                "x-kubernetes-embedded-resource" => node.embedded_resource = bool_of(value, &at)?,
                "x-kubernetes-list-type" => {
                    node.list_type = match string_of(value, &at)? {
                        "atomic" => Some(ListType::Atomic),
                        "set" => Some(ListType::Set),
                        "map" => Some(ListType::Map),
                        other => return Err(Compiler::error(&at, format!("unknown list type {other:?}"))),
                    }
                }
                "x-kubernetes-list-map-keys" => match value {
                    Node::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            node.list_map_keys
                                .push(string_of(item, &Path::Index(&at, i))?.to_string());
                        }
                    }
                    Node::Null => {}
                    _ => return Err(Compiler::error(&at, "must be an array of strings")),
                },
                "x-kubernetes-map-type" => node.map_type = Some(string_of(value, &at)?.to_string()),
                "x-kubernetes-validations" if !value.is_null() => node.validations = Some(owned(value)),
                _ => {}
            }
        }
        // Kubernetes' published documents write a field of a named type as
        // `allOf: [{$ref: ...}]` beside its `default` and `description`: the field is that type
        // (kube-openapi reads it so), not a composition whose failure adds an `allOf` error.
        // The node keeps its own `default` and `nullable` and stands for the type otherwise.
        let single_ref = match schema.get("allOf") {
            Some(Node::Array(parts)) => parts.len() == 1 && parts[0].get("$ref").is_some(),
            _ => false,
        };
        if single_ref && node.types.is_empty() && node.properties.is_empty() && node.items.is_none() {
            node.alias = node.all_of.pop();
        }
        if int_or_string {
            // `ConvertJSONSchemaProps`: `x-kubernetes-int-or-string` is type `integer,string`.
            node.int_or_string = true;
            node.types = Types::INTEGER.with(Types::STRING);
            node.type_names = "integer,string".to_string();
        }
        if !format_name.is_empty() {
            node.format = Format::of(&format_name, node.types, self.minor);
            node.format_name = format_name;
        }
        if node.validations.is_some() {
            self.rule_paths.push((index, path.to_string()));
        }
        self.nodes[index - self.base] = node;
        Ok(index)
    }

    /// The index of the schema a `$ref` names, compiled once.
    fn reference(&mut self, reference: &str, path: &Path<'_>) -> Result<usize, SchemaError> {
        if let Some(&index) = self.refs.get(reference) {
            return Ok(index);
        }
        let Some(name) = reference.strip_prefix(REF_PREFIX) else {
            return Err(Compiler::error(path, format!("unsupported reference {reference:?}")));
        };
        if let Components::Deferred = self.components {
            let index = self.next();
            self.nodes.push(SchemaNode {
                deferred: Some(Deferred {
                    name: name.to_string(),
                    part: None,
                    target: std::cell::OnceCell::new(),
                }),
                ..SchemaNode::default()
            });
            self.refs.insert(reference.to_string(), index);
            return Ok(index);
        }
        let Some(target) = self.components.get(name) else {
            return Err(Compiler::error(
                path,
                format!("reference {reference:?} names no schema"),
            ));
        };
        // Reserve the index first so that a schema referring to itself finds it.
        let index = self.next();
        self.nodes.push(SchemaNode::default());
        self.refs.insert(reference.to_string(), index);
        let compiled = self.compile(target, &Path::Key(&Path::Root("components.schemas"), name))?;
        self.nodes[index - self.base].alias = Some(compiled);
        Ok(index)
    }
}

/// A node of a compiled schema as the CEL library reads it ([`super::cel::SchemaView`]).
#[derive(Clone, Copy)]
pub struct View<'s> {
    schema: &'s Schema,
    node: &'s SchemaNode,
    /// Whether the node is the resource's root (an embedded resource to CEL).
    root: bool,
}

impl<'s> View<'s> {
    /// The view of node `index` (an alias seen as the node it stands for).
    pub fn new(schema: &'s Schema, index: usize, root: bool) -> View<'s> {
        View {
            schema,
            node: schema.resolved(index),
            root,
        }
    }

    fn child(self, index: Option<usize>) -> Option<View<'s>> {
        index.map(|index| View::new(self.schema, index, false))
    }
}

impl<'s> super::cel::SchemaView<'s> for View<'s> {
    fn type_name(self) -> Option<&'s str> {
        (!self.node.int_or_string && !self.node.type_names.is_empty()).then_some(self.node.type_names.as_str())
    }
    fn format(self) -> Option<&'s str> {
        (!self.node.format_name.is_empty()).then_some(self.node.format_name.as_str())
    }
    fn int_or_string(self) -> bool {
        self.node.int_or_string
    }
    fn preserve_unknown_fields(self) -> bool {
        self.node.preserve_unknown_fields
    }
    fn embedded_resource(self) -> bool {
        self.node.embedded_resource || self.root
    }
    fn nullable(self) -> bool {
        self.node.nullable
    }
    fn has_properties(self) -> bool {
        !self.node.properties.is_empty()
    }
    fn property(self, name: &str) -> Option<View<'s>> {
        self.child(self.node.property(name))
    }
    fn additional_properties(self) -> Option<View<'s>> {
        match self.node.additional_properties {
            Additional::Schema(index) => self.child(Some(index)),
            _ => None,
        }
    }
    fn items(self) -> Option<View<'s>> {
        self.child(self.node.items)
    }
    fn list_type(self) -> Option<&'s str> {
        self.node.list_type.map(|t| match t {
            ListType::Atomic => "atomic",
            ListType::Set => "set",
            ListType::Map => "map",
        })
    }
    fn list_map_keys(self) -> Vec<&'s str> {
        self.node.list_map_keys.iter().map(String::as_str).collect()
    }
    fn max_length(self) -> Option<u64> {
        self.node.max_length.and_then(|n| u64::try_from(n).ok())
    }
    fn max_items(self) -> Option<u64> {
        self.node.max_items.and_then(|n| u64::try_from(n).ok())
    }
    fn max_properties(self) -> Option<u64> {
        self.node.max_properties.and_then(|n| u64::try_from(n).ok())
    }
}

/// Where a keyword is in a schema, as an error names it (`properties.spec.required[0]`): a chain
/// of its parents on the compiler's stack, written out only for an error or a node with CEL
/// rules, not for each of the thousands of keywords of a CRD's schema.
#[derive(Clone, Copy)]
enum Path<'p> {
    /// Where the schema starts (`""` for the root).
    Root(&'p str),
    /// A member of an object.
    Key(&'p Path<'p>, &'p str),
    /// An element of an array.
    Index(&'p Path<'p>, usize),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root(root) => f.write_str(root),
            Path::Key(parent, key) => {
                if parent.is_empty() {
                    f.write_str(key)
                } else {
                    write!(f, "{parent}.{key}")
                }
            }
            Path::Index(parent, index) => write!(f, "{parent}[{index}]"),
        }
    }
}

impl Path<'_> {
    /// How many members and elements deep it goes from its root.
    fn steps(&self) -> usize {
        match self {
            Path::Root(_) => 0,
            Path::Key(parent, _) | Path::Index(parent, _) => parent.steps() + 1,
        }
    }

    /// Whether it writes nothing (the root).
    fn is_empty(&self) -> bool {
        match self {
            Path::Root(root) => root.is_empty(),
            Path::Key(parent, key) => key.is_empty() && parent.is_empty(),
            Path::Index(..) => false,
        }
    }
}

/// A value left unread ([`Node::Raw`]) read whole.
fn unraw<'j>(raw: &'j serde_json::value::RawValue, path: &Path<'_>) -> Result<Node<'j>, SchemaError> {
    crate::json::read(raw.get(), crate::cluster::CrdPart::All, usize::MAX)
        .map_err(|e| Compiler::error(path, format!("the schema is not JSON: {e}")))
}

fn bool_of(value: &Node<'_>, path: &Path<'_>) -> Result<bool, SchemaError> {
    match value {
        Node::Bool(b) => Ok(*b),
        Node::Null => Ok(false),
        _ => Err(Compiler::error(path, "must be a boolean")),
    }
}

fn string_of<'n>(value: &'n Node<'_>, path: &Path<'_>) -> Result<&'n str, SchemaError> {
    value.as_str().ok_or_else(|| Compiler::error(path, "must be a string"))
}

fn number_of(value: &Node<'_>, path: &Path<'_>) -> Result<f64, SchemaError> {
    value
        .number()
        .map(Number::as_f64)
        .ok_or_else(|| Compiler::error(path, "must be a number"))
}

fn integer_of(value: &Node<'_>, path: &Path<'_>) -> Result<i64, SchemaError> {
    match value.number() {
        Some(Number::U64(n)) => Ok(i64::try_from(n).unwrap_or(i64::MAX)),
        Some(Number::I64(n)) => Ok(n),
        _ => Err(Compiler::error(path, "must be an integer")),
    }
}

/// An owned copy of a JSON tree (a compiled schema outlives the text it was read from).
pub fn owned(node: &Node<'_>) -> Node<'static> {
    match node {
        Node::Raw(raw) => match crate::json::read(raw.get(), crate::json::Everything, 64) {
            Ok(read) => owned(&read),
            Err(_) => Node::Null,
        },
        Node::Skipped => Node::Skipped,
        Node::Null => Node::Null,
        Node::Bool(b) => Node::Bool(*b),
        Node::U64(bits) => Node::U64(*bits),
        Node::I64(bits) => Node::I64(*bits),
        Node::F64(bits) => Node::F64(*bits),
        Node::Str(s) => Node::Str(Cow::Owned(s.to_string())),
        Node::Array(items) => Node::Array(items.iter().map(owned).collect()),
        Node::Object(entries) => Node::Object(
            entries
                .iter()
                .map(|(key, value)| (Cow::Owned(key.to_string()), owned(value)))
                .collect(),
        ),
        Node::TooDeep => Node::TooDeep,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Everything};

    #[test]
    fn go_regex_errors_are_gos_parsers_word_for_word() {
        // Each pattern with the error Go's `regexp.Compile` gives it (go1.25+ `regexp/syntax`),
        // none where Go compiles it or where the answer is not certain.
        let table: &[(&str, Option<&str>)] = &[
            (r#"[a-"#, Some(r#"error parsing regexp: missing closing ]: `[a-`"#)),
            (
                r#"(?=abc)"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?=`"#),
            ),
            (
                r#"(?!abc)"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?!`"#),
            ),
            (
                r#"(?<=a)b"#,
                Some(r#"error parsing regexp: invalid named capture: `(?<=a)b`"#),
            ),
            (
                r#"(?<!a)b"#,
                Some(r#"error parsing regexp: invalid named capture: `(?<!a)b`"#),
            ),
            // Go: "invalid character class range: `\p{Foo}`"; Unicode class names are Go's tables'.
            (r#"\p{Foo}"#, None),
            (r#"\1"#, Some(r#"error parsing regexp: invalid escape sequence: `\1`"#)),
            (
                r#"(a)\1"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\1`"#),
            ),
            (r#"(abc"#, Some(r#"error parsing regexp: missing closing ): `(abc`"#)),
            (r#"abc)"#, Some(r#"error parsing regexp: unexpected ): `abc)`"#)),
            (
                r#"x**"#,
                Some(r#"error parsing regexp: invalid nested repetition operator: `**`"#),
            ),
            (
                r#"a++"#,
                Some(r#"error parsing regexp: invalid nested repetition operator: `++`"#),
            ),
            (
                r#"a*?*"#,
                Some(r#"error parsing regexp: invalid nested repetition operator: `*?*`"#),
            ),
            (
                r#"*a"#,
                Some(r#"error parsing regexp: missing argument to repetition operator: `*`"#),
            ),
            (
                r#"a|*"#,
                Some(r#"error parsing regexp: missing argument to repetition operator: `*`"#),
            ),
            (
                r#"(*)"#,
                Some(r#"error parsing regexp: missing argument to repetition operator: `*`"#),
            ),
            (
                r#"a{2,1}"#,
                Some(r#"error parsing regexp: invalid repeat count: `{2,1}`"#),
            ),
            (
                r#"a{1001}"#,
                Some(r#"error parsing regexp: invalid repeat count: `{1001}`"#),
            ),
            (
                r#"a{2}{3}"#,
                Some(r#"error parsing regexp: invalid nested repetition operator: `{2}{3}`"#),
            ),
            (
                r#"a\"#,
                Some(r#"error parsing regexp: trailing backslash at end of expression: ``"#),
            ),
            (
                r#"[z-a]"#,
                Some(r#"error parsing regexp: invalid character class range: `z-a`"#),
            ),
            (
                r#"[[:foo:]]"#,
                Some(r#"error parsing regexp: invalid character class range: `[:foo:]`"#),
            ),
            (r#"[[:alpha:]]"#, None),
            (r#"\q"#, Some(r#"error parsing regexp: invalid escape sequence: `\q`"#)),
            (r#"\8"#, Some(r#"error parsing regexp: invalid escape sequence: `\8`"#)),
            (
                r#"\xZZ"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\xZZ`"#),
            ),
            (
                r#"\x{}"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\x{}`"#),
            ),
            (
                r#"\x{110000}"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\x{110000`"#),
            ),
            (
                r#"\xA"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\xA`"#),
            ),
            (r#"(?i)abc"#, None),
            (
                r#"(?i"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?i`"#),
            ),
            (r#"(?P<n>a)"#, None),
            (
                r#"(?P<1-2>a)"#,
                Some(r#"error parsing regexp: invalid named capture: `(?P<1-2>`"#),
            ),
            (
                r#"(?<name"#,
                Some(r#"error parsing regexp: invalid named capture: `(?<name`"#),
            ),
            (r#"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"#, None),
            (r#"\d{1,3}"#, None),
            (
                r#"{2}"#,
                Some(r#"error parsing regexp: missing argument to repetition operator: `{2}`"#),
            ),
            (r#"a{,5}"#, None),
            (r#"a{01}"#, None),
            (r#"[]a]"#, None),
            (r#"[^]a]"#, None),
            (
                r#"[a-\d]"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\d`"#),
            ),
            (
                r#"(?-)a"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?-)`"#),
            ),
            (
                r#"(?i-)a"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?i-)`"#),
            ),
            (
                r#"(?--i)a"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?--`"#),
            ),
            (r#"(?:a){2}"#, None),
            (r#"\C"#, Some(r#"error parsing regexp: invalid escape sequence: `\C`"#)),
            (r#"\Qa*\E*"#, None),
            (r#"\é"#, Some(r#"error parsing regexp: invalid escape sequence: `\é`"#)),
            (
                r#"[\1]"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\1`"#),
            ),
            (
                r#"[\8]"#,
                Some(r#"error parsing regexp: invalid escape sequence: `\8`"#),
            ),
            (r#"a{1000}"#, None),
            (r#"\0"#, None),
            (r#"\08"#, None),
            (r#"\_"#, None),
            (r#"(?U)a"#, None),
            (
                r#"(?x)a"#,
                Some(r#"error parsing regexp: invalid or unsupported Perl syntax: `(?x`"#),
            ),
            (r#")"#, Some(r#"error parsing regexp: unexpected ): `)`"#)),
            (r#"a)("#, Some(r#"error parsing regexp: unexpected ): `a)(`"#)),
        ];
        for (pattern, expected) in table {
            assert_eq!(go_regex_error(pattern).as_deref(), *expected, "{pattern}");
        }
        // Not certain: a counted repetition of a group, a long pattern.
        assert_eq!(go_regex_error("(a{500}){3}"), None);
        // Go checks the size of a counted repetition of a repetition the flag group or the empty
        // `\Q\E` left on its stack (`invalid repeat count: `{2}``): not followed, not said.
        assert_eq!(go_regex_error("a{600}(?i){2}*"), None);
        assert_eq!(go_regex_error("a{600}\\Q\\E{2}*"), None);
        assert_eq!(go_regex_error(&format!("{}(?=", "a".repeat(1001))), None);
    }

    fn compile(text: &str) -> Result<Schema, SchemaError> {
        let node = json::read(text, Everything, 128).unwrap();
        Schema::compile(&node, None, 35)
    }

    #[test]
    fn keywords_compile() {
        let schema = compile(
            r#"{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","properties":{
                "size":{"type":"integer","minimum":1,"maximum":10,"exclusiveMaximum":true,"multipleOf":2,"default":4},
                "name":{"type":"string","maxLength":5,"pattern":"^[a-z]+$","format":"date-time","enum":["a","b"]},
                "port":{"x-kubernetes-int-or-string":true},
                "list":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],"items":{"type":"object"}}
            }}}}"#,
        )
        .unwrap();
        let spec = schema.node(schema.root_node().property("spec").unwrap());
        let size = schema.node(spec.property("size").unwrap());
        assert_eq!(
            (size.minimum, size.maximum, size.exclusive_maximum),
            (Some(1.0), Some(10.0), true)
        );
        assert!(size.default.is_some());
        let name = schema.node(spec.property("name").unwrap());
        assert_eq!(name.format, Some(Format::DateTime));
        assert_eq!(name.pattern.as_ref().unwrap().matches("abc"), Some(true));
        let port = schema.node(spec.property("port").unwrap());
        assert_eq!(port.type_names, "integer,string");
        let list = schema.node(spec.property("list").unwrap());
        assert_eq!(list.list_type, Some(ListType::Map));
        assert_eq!(list.list_map_keys, ["name"]);
        assert_eq!(schema.root_node().required, ["spec"]);
    }

    #[test]
    fn unreadable_schemas_name_the_path() {
        let error = compile(r#"{"properties":{"spec":{"properties":{"a":{"type":"strign"}}}}}"#).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"properties.spec.properties.a.type: unknown type "strign""#
        );
        let error = compile(r#"{"properties":{"a":{"maxLength":"5"}}}"#).unwrap_err();
        assert_eq!(error.to_string(), "properties.a.maxLength: must be an integer");
        assert!(compile(r#"{"properties":{"a":3}}"#).is_err());
    }

    #[test]
    fn references_compile_once_and_recursion_stays_finite() {
        let components = json::read(
            r##"{"Props":{"type":"object","properties":{"not":{"$ref":"#/components/schemas/Props"},
                "items":{"allOf":[{"$ref":"#/components/schemas/Props"}]}}}}"##,
            Everything,
            128,
        )
        .unwrap();
        let root = json::read(r##"{"$ref":"#/components/schemas/Props"}"##, Everything, 128).unwrap();
        let schema = Schema::compile(&root, Some(&components), 35).unwrap();
        assert!(schema.len() < 10);
        let root = schema.root_node();
        assert_eq!(root.property("not"), Some(schema.root));
        let items = schema.resolved(root.property("items").unwrap());
        assert!(items.all_of.is_empty() && items.property("not").is_some());
        let missing = json::read(r##"{"$ref":"#/components/schemas/Nope"}"##, Everything, 128).unwrap();
        assert!(Schema::compile(&missing, Some(&components), 35).is_err());
    }

    #[test]
    fn formats_the_api_server_checks() {
        assert_eq!(Format::of("date-time", Types::STRING, 35), Some(Format::DateTime));
        assert_eq!(Format::of("int32", Types::INTEGER, 35), None);
        assert_eq!(Format::of("quantity", Types::STRING, 35), None);
        assert_eq!(Format::of("k8s-short-name", Types::STRING, 33), None);
        assert_eq!(
            Format::of("k8s-short-name", Types::STRING, 34),
            Some(Format::K8sShortName)
        );
    }

    #[test]
    fn go_classes_are_ascii() {
        assert!(!Pattern::compile(r"^\d+$").matches("١٢").unwrap());
        assert!(Pattern::compile(r"^\d+$").matches("12").unwrap());
        assert!(Pattern::compile(r"^[\w.-]+$").matches("a_b.c-d").unwrap());
        assert!(!Pattern::compile(r"^\w+$").matches("é").unwrap());
        assert!(Pattern::compile(r"^[]a]+$").matches("]a").unwrap());
        // Go's `\s` has no vertical tab; regex-lite's has.
        assert!(!Pattern::compile(r"^\s$").matches("\u{b}").unwrap());
        assert!(Pattern::compile(r"^[\s]$").matches("\t").unwrap());
        assert!(Pattern::compile(r"\bab\b").matches("x ab").unwrap());
    }

    #[test]
    fn what_regex_lite_cannot_read_is_not_checked() {
        // Unicode classes and Unicode case folding: never a refusal Go would not make.
        assert_eq!(Pattern::compile(r"^\p{L}+$").matches("é"), None);
        assert_eq!(Pattern::compile(r"^\pL+$").matches("1"), None);
        assert_eq!(Pattern::compile(r"(?i)^straße$").matches("STRASSE"), None);
        assert!(go_regex(r"^\QA.B\E$").is_err());
        // ASCII case folding is regex-lite's too.
        assert!(Pattern::compile(r"(?i)^abc$").matches("AbC").unwrap());
        assert!(Pattern::compile(r"^é$").matches("é").unwrap());
    }

    #[test]
    fn one_reading_gives_gos_verdict_and_the_rewriting() {
        // What Go's parser refuses, regex-lite read (a different answer): now refused, with Go's
        // error, as `go_regex_error` gives it.
        for pattern in ["x**", "a{2}{3}", "(?x)a"] {
            let error = go_regex(pattern).unwrap_err();
            assert_eq!(Some(error), go_regex_error(pattern), "{pattern}");
        }
        // A named group or a class holding `(?i` sets no flag: non-ASCII text compiles.
        assert!(Pattern::compile(r"(?P<id>x)é").matches("xé").unwrap());
        assert!(Pattern::compile(r"[(?i)]é").matches("ié").unwrap());
        assert_eq!(Pattern::compile(r"(?i:x)é").matches("xé"), None);
        // An unsure verdict (a counted repetition of a group) still compiles.
        assert_eq!(go_regex_error("(a{500}){3}"), None);
        assert!(Pattern::compile(r"^(ab){2}\s$").matches("abab ").unwrap());
    }
}
