//! The one JSON reader of the policy modules: a borrowed, lazy view of a checked document.
//!
//! [`parse`] checks a whole document once, without recursion (so no input depth can exhaust
//! the stack), and records where each of its arrays and objects ends. Its root is a [`Json`]:
//! a slice of the text. Reading a field scans the object's members and steps over the values it
//! passes (a container in one lookup, using the recorded ends), so nothing is copied or built
//! that a check does not ask for, and reading nested views costs about one pass over the text
//! they cover, whatever the depth. Views declare how they are read with [`FromJson`]; errors
//! name the path of the value that does not fit and use serde_json's wording (`invalid type:
//! string "x", expected a boolean`), which the policies document as their messages.
//!
//! A check that walks a whole document builds a [`Tree`] of it in one pass instead; mutating
//! checks edit an object's text with [`with_member`], and answers are written with
//! [`write_string`].
//!
//! This replaces serde's per-type deserializers in the guest: every view shares the same few
//! functions here instead of carrying its own instance of serde_json's parser, which is what
//! keeps each policy module under 128 KiB.

use std::borrow::Cow;
use std::collections::BTreeMap;

/// A value inside a document checked by [`parse`]: its text, without surrounding whitespace.
#[derive(Debug, Clone, Copy)]
pub struct Json<'a> {
    text: &'a str,
    index: &'a Index,
}

/// Where the arrays and objects of a checked document end.
#[derive(Debug, Default)]
struct Index {
    /// Address of the document's first byte.
    base: usize,
    /// Start and end offsets (end exclusive) of every array and object, sorted by start.
    ends: Vec<(u32, u32)>,
}

/// A document checked by [`parse`] (borrowing its text) or [`parse_owned`] (owning it).
#[derive(Debug)]
pub struct Document<'t> {
    // Not `Clone`: the index records the text's address, which a copy would not share.
    text: Cow<'t, str>,
    root: (usize, usize),
    index: Index,
}

impl Document<'_> {
    /// The document's text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The document's root value.
    pub fn root(&self) -> Json<'_> {
        Json {
            text: &self.text[self.root.0..self.root.1],
            index: &self.index,
        }
    }
}

/// The JSON type of a [`Json`] value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool,
    /// A number.
    Number,
    /// A string.
    String,
    /// An array.
    Array,
    /// An object.
    Object,
}

/// Why a document or value could not be read: a message, the path of the value it concerns
/// (`spec.versions[0].name`, empty for the document itself) and where in the text it stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What is wrong, in serde_json's words.
    pub message: String,
    /// Path of the offending value, `a.b[2].c`.
    pub path: String,
    /// Address just past the offending token (compared with the document's own address to
    /// give serde_json's `line L column C`).
    end: usize,
}

impl Error {
    fn at(message: impl Into<String>, end: *const u8) -> Self {
        Error {
            message: message.into(),
            path: String::new(),
            end: end as usize,
        }
    }

    /// The same error, one object member further out.
    pub fn in_key(mut self, key: &str) -> Self {
        self.path = match self.path.as_bytes().first() {
            None => key.to_string(),
            Some(b'[') => format!("{key}{}", self.path),
            Some(_) => format!("{key}.{}", self.path),
        };
        self
    }

    /// The same error, one array element further out.
    pub fn in_index(mut self, index: usize) -> Self {
        self.path = match self.path.as_bytes().first() {
            None => format!("[{index}]"),
            Some(b'[') => format!("[{index}]{}", self.path),
            Some(_) => format!("[{index}].{}", self.path),
        };
        self
    }

    /// Byte offset in `document` (the text given to [`parse`]) of the character the error
    /// stopped on; `None` when the error does not point into `document`.
    pub fn offset(&self, document: &str) -> Option<usize> {
        let past = self.end.checked_sub(document.as_ptr() as usize)?;
        (past <= document.len()).then(|| past.saturating_sub(1))
    }

    /// `line L column C` of the error in `document` (the text given to [`parse`]), as
    /// serde_json counts them; `None` when the error does not point into `document`.
    pub fn line_column(&self, document: &str) -> Option<(usize, usize)> {
        let offset = self.end.checked_sub(document.as_ptr() as usize)?;
        let (mut line, mut column) = (1, 0);
        for &byte in document.as_bytes().get(..offset)? {
            if byte == b'\n' {
                line += 1;
                column = 0;
            } else {
                column += 1;
            }
        }
        Some((line, column))
    }

    /// The message followed by serde_json's ` at line L column C` position in `document`.
    pub fn located(&self, document: &str) -> String {
        match self.line_column(document) {
            Some((line, column)) => format!("{} at line {line} column {column}", self.message),
            None => self.message.clone(),
        }
    }

    /// `` `path`: message `` (the message alone at the document's root).
    pub fn with_path(&self) -> String {
        if self.path.is_empty() {
            self.message.clone()
        } else {
            format!("`{}`: {}", self.path, self.message)
        }
    }
}

/// Checks that `text` is one JSON document (of at most 4 GiB).
pub fn parse(text: &str) -> Result<Document<'_>, Error> {
    let bytes = text.as_bytes();
    if u32::try_from(bytes.len()).is_err() {
        return Err(Error::at("document larger than 4 GiB", bytes.as_ptr()));
    }
    let mut ends = Vec::new();
    let start = skip_space(bytes, 0);
    let end = check_value(bytes, start, &mut ends)?;
    let rest = skip_space(bytes, end);
    if rest < bytes.len() {
        return Err(Error::at("trailing characters", bytes[rest..].as_ptr().wrapping_add(1)));
    }
    Ok(Document {
        text: Cow::Borrowed(text),
        root: (start, end),
        index: Index {
            base: bytes.as_ptr() as usize,
            ends,
        },
    })
}

/// Checks `text` as [`parse`] does and keeps it; the error is given with its position.
pub fn parse_owned(text: String) -> Result<Document<'static>, String> {
    // The index records the address of the text's bytes, which moving the String keeps.
    let (root, index) = match parse(&text) {
        Ok(document) => (document.root, document.index),
        Err(e) => return Err(e.located(&text)),
    };
    Ok(Document {
        text: Cow::Owned(text),
        root,
        index,
    })
}

/// Reads `text`, a whole JSON document, as `T`.
pub fn read<T: for<'d> FromJson<'d>>(text: &str) -> Result<T, Error> {
    parse(text)?.root().read()
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && matches!(bytes[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// One open container while checking a document.
#[derive(Clone, Copy, PartialEq)]
enum Open {
    Array,
    Object,
}

fn syntax(bytes: &[u8], i: usize, message: &str) -> Error {
    // serde_json points just past the character it stopped on.
    Error::at(message, bytes.as_ptr().wrapping_add((i + 1).min(bytes.len())))
}

/// Checks the value starting at `i` (after whitespace) and returns the index just past it;
/// records the start and end of every array and object in `ends`.
fn check_value(bytes: &[u8], mut i: usize, ends: &mut Vec<(u32, u32)>) -> Result<usize, Error> {
    // Open containers, each with its entry in `ends`. Offsets fit in u32: see `parse`.
    let mut stack: Vec<(Open, usize)> = Vec::new();
    loop {
        // A value is expected at `i`.
        i = skip_space(bytes, i);
        let Some(&byte) = bytes.get(i) else {
            return Err(syntax(bytes, i, "EOF while parsing a value"));
        };
        match byte {
            b'{' | b'[' => {
                let (open, close) = if byte == b'{' {
                    (Open::Object, b'}')
                } else {
                    (Open::Array, b']')
                };
                let start = i;
                i = skip_space(bytes, i + 1);
                if bytes.get(i) == Some(&close) {
                    i += 1;
                    ends.push((start as u32, i as u32));
                } else {
                    stack.push((open, ends.len()));
                    ends.push((start as u32, 0));
                    match open {
                        // The first member's key (check_key reports an object cut short).
                        Open::Object => i = check_key(bytes, i)?,
                        Open::Array if i >= bytes.len() => {
                            return Err(syntax(bytes, i, "EOF while parsing a list"));
                        }
                        Open::Array => {}
                    }
                    continue;
                }
            }
            b'"' => i = check_string(bytes, i)?,
            b't' => i = check_word(bytes, i, b"true")?,
            b'f' => i = check_word(bytes, i, b"false")?,
            b'n' => i = check_word(bytes, i, b"null")?,
            b'-' | b'0'..=b'9' => i = check_number(bytes, i)?,
            _ => return Err(syntax(bytes, i, "expected value")),
        }
        // A value ended at `i`: close containers or move to the next member.
        loop {
            let Some(&(open, entry)) = stack.last() else {
                return Ok(i);
            };
            i = skip_space(bytes, i);
            let (close, eof) = match open {
                Open::Array => (b']', "EOF while parsing a list"),
                Open::Object => (b'}', "EOF while parsing an object"),
            };
            match bytes.get(i) {
                None => return Err(syntax(bytes, i, eof)),
                Some(&b) if b == close => {
                    stack.pop();
                    i += 1;
                    ends[entry].1 = i as u32;
                }
                Some(b',') => {
                    i = skip_space(bytes, i + 1);
                    if bytes.get(i) == Some(&close) {
                        return Err(syntax(bytes, i, "trailing comma"));
                    }
                    if open == Open::Object {
                        i = check_key(bytes, i)?;
                    }
                    break;
                }
                Some(_) if open == Open::Array => return Err(syntax(bytes, i, "expected `,` or `]`")),
                Some(_) => return Err(syntax(bytes, i, "expected `,` or `}`")),
            }
        }
    }
}

/// Checks `"key" :` at `i` and returns the index just past the colon.
fn check_key(bytes: &[u8], i: usize) -> Result<usize, Error> {
    match bytes.get(i) {
        None => return Err(syntax(bytes, i, "EOF while parsing an object")),
        Some(b'"') => {}
        Some(_) => return Err(syntax(bytes, i, "key must be a string")),
    }
    let i = skip_space(bytes, check_string(bytes, i)?);
    match bytes.get(i) {
        Some(b':') => Ok(i + 1),
        None => Err(syntax(bytes, i, "EOF while parsing an object")),
        Some(_) => Err(syntax(bytes, i, "expected `:`")),
    }
}

fn check_word(bytes: &[u8], i: usize, word: &[u8]) -> Result<usize, Error> {
    for (k, expected) in word.iter().enumerate() {
        match bytes.get(i + k) {
            None => return Err(syntax(bytes, i + k, "EOF while parsing a value")),
            Some(b) if b == expected => {}
            Some(_) => return Err(syntax(bytes, i + k, "expected ident")),
        }
    }
    Ok(i + word.len())
}

fn check_number(bytes: &[u8], mut i: usize) -> Result<usize, Error> {
    let digits = |bytes: &[u8], mut i: usize| {
        let start = i;
        while bytes.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        (i, i > start)
    };
    if bytes[i] == b'-' {
        i += 1;
    }
    match bytes.get(i) {
        Some(b'0') if bytes.get(i + 1).is_some_and(u8::is_ascii_digit) => {
            return Err(syntax(bytes, i + 1, "invalid number"));
        }
        Some(b'0') => i += 1,
        Some(b'1'..=b'9') => i = digits(bytes, i).0,
        None => return Err(syntax(bytes, i, "EOF while parsing a value")),
        Some(_) => return Err(syntax(bytes, i, "invalid number")),
    }
    if bytes.get(i) == Some(&b'.') {
        let (next, any) = digits(bytes, i + 1);
        if !any {
            return Err(number_end(bytes, next));
        }
        i = next;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(bytes.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let (next, any) = digits(bytes, i);
        if !any {
            return Err(number_end(bytes, next));
        }
        i = next;
    }
    Ok(i)
}

/// The error for a number cut short at `i` (no digit after `.` or the exponent).
fn number_end(bytes: &[u8], i: usize) -> Error {
    let message = if i >= bytes.len() {
        "EOF while parsing a value"
    } else {
        "invalid number"
    };
    syntax(bytes, i, message)
}

/// Checks the string starting at `i` (its opening quote) and returns the index past its end.
fn check_string(bytes: &[u8], mut i: usize) -> Result<usize, Error> {
    i += 1;
    loop {
        i = plain_run(bytes, i);
        match bytes.get(i) {
            None => return Err(syntax(bytes, i, "EOF while parsing a string")),
            Some(b'"') => return Ok(i + 1),
            Some(b'\\') => {
                i += 1;
                match bytes.get(i) {
                    None => return Err(syntax(bytes, i, "EOF while parsing a string")),
                    Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 1,
                    Some(b'u') => {
                        let (unit, next) = hex4(bytes, i + 1)?;
                        i = next;
                        if (0xD800..0xDC00).contains(&unit) {
                            if bytes.get(i) != Some(&b'\\') || bytes.get(i + 1) != Some(&b'u') {
                                return Err(syntax(bytes, i, "unexpected end of hex escape"));
                            }
                            let (low, next) = hex4(bytes, i + 2)?;
                            if !(0xDC00..0xE000).contains(&low) {
                                return Err(syntax(bytes, next - 1, "lone leading surrogate in hex escape"));
                            }
                            i = next;
                        } else if (0xDC00..0xE000).contains(&unit) {
                            return Err(syntax(bytes, i - 1, "lone leading surrogate in hex escape"));
                        }
                    }
                    Some(_) => return Err(syntax(bytes, i, "invalid escape")),
                }
            }
            Some(&b) if b < 0x20 => {
                return Err(syntax(
                    bytes,
                    i,
                    "control character (\\u0000-\\u001F) found while parsing a string",
                ));
            }
            Some(_) => i += 1,
        }
    }
}

fn hex4(bytes: &[u8], i: usize) -> Result<(u32, usize), Error> {
    if bytes.len() < i + 4 {
        return Err(syntax(bytes, bytes.len(), "EOF while parsing a string"));
    }
    let mut unit = 0;
    for k in 0..4 {
        let digit = match bytes.get(i + k) {
            None => return Err(syntax(bytes, i + k, "EOF while parsing a string")),
            Some(&b) => (b as char).to_digit(16),
        };
        match digit {
            Some(d) => unit = unit * 16 + d,
            None => return Err(syntax(bytes, i + k, "invalid escape")),
        }
    }
    Ok((unit, i + 4))
}

/// Index just past the checked value starting at `i` of `bytes`, scanning (see [`Json::end_of`]
/// for the indexed form).
fn skip_value(bytes: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    loop {
        match bytes[i] {
            b'"' => i = skip_string(bytes, i),
            b'{' | b'[' => {
                depth += 1;
                i += 1;
            }
            b'}' | b']' => {
                depth -= 1;
                i += 1;
            }
            _ if depth == 0 => {
                while i < bytes.len() && !matches!(bytes[i], b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r') {
                    i += 1;
                }
                return i;
            }
            _ => i += 1,
        }
        if depth == 0 {
            return i;
        }
    }
}

/// Index just past the checked string whose opening quote is at `i`.
fn skip_string(bytes: &[u8], i: usize) -> usize {
    string_at(bytes, i).0
}

/// Index just past the checked string whose opening quote is at `i`, and whether it holds an
/// escape.
fn string_at(bytes: &[u8], mut i: usize) -> (usize, bool) {
    i += 1;
    let mut escaped = false;
    loop {
        i = plain_run(bytes, i);
        match bytes.get(i) {
            Some(b'\\') => {
                escaped = true;
                i += 2;
            }
            Some(b'"') | None => return (i + 1, escaped),
            // A control character cannot be in a checked string; step over it all the same.
            Some(_) => i += 1,
        }
    }
}

/// Index of the first byte at or after `i` that is a quote, a backslash or a control
/// character (or the end): the plain characters that make up most of any document, eight at a
/// time.
fn plain_run(bytes: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    // Nonzero when some byte of `word` is below `n` (n <= 0x80).
    let below = |word: u64, n: u8| word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let word = u64::from_le_bytes(word);
        let special =
            below(word ^ (ONES * u64::from(b'"')), 1) | below(word ^ (ONES * u64::from(b'\\')), 1) | below(word, 0x20);
        if special != 0 {
            break;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] >= 0x20 && bytes[i] != b'"' && bytes[i] != b'\\' {
        i += 1;
    }
    i
}

/// The content of the checked string spanning `start..end` of `text` (quotes included).
fn string_value(text: &str, start: usize, end: usize, escaped: bool) -> Cow<'_, str> {
    let inner = &text[start + 1..end - 1];
    if escaped { unescape(inner) } else { Cow::Borrowed(inner) }
}

/// The text of a checked string (without quotes) with its escapes resolved.
fn unescape(inner: &str) -> Cow<'_, str> {
    if !inner.contains('\\') {
        return Cow::Borrowed(inner);
    }
    let bytes = inner.as_bytes();
    let hex = |i: usize| {
        inner
            .get(i..i + 4)
            .and_then(|h| u32::from_str_radix(h, 16).ok())
            .unwrap_or(0xFFFD)
    };
    let mut out = String::with_capacity(inner.len());
    let mut plain = 0;
    while let Some(found) = inner[plain..].find('\\') {
        let i = plain + found;
        out.push_str(&inner[plain..i]);
        let (c, next) = match bytes.get(i + 1) {
            Some(b'b') => ('\u{8}', i + 2),
            Some(b'f') => ('\u{c}', i + 2),
            Some(b'n') => ('\n', i + 2),
            Some(b'r') => ('\r', i + 2),
            Some(b't') => ('\t', i + 2),
            Some(b'u') => {
                let unit = hex(i + 2);
                if (0xD800..0xDC00).contains(&unit) {
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (hex(i + 8).wrapping_sub(0xDC00) & 0x3FF);
                    (char::from_u32(code).unwrap_or('\u{FFFD}'), i + 12)
                } else {
                    (char::from_u32(unit).unwrap_or('\u{FFFD}'), i + 6)
                }
            }
            Some(&other) => (other as char, i + 2),
            None => break,
        };
        out.push(c);
        plain = next.min(bytes.len());
    }
    out.push_str(&inner[plain..]);
    Cow::Owned(out)
}

impl<'a> Json<'a> {
    /// Index just past the value starting at byte `i` of this value's text: one lookup for an
    /// array or object, a scan for a string or scalar.
    fn end_of(&self, i: usize) -> usize {
        let bytes = self.text.as_bytes();
        if matches!(bytes[i], b'{' | b'[') {
            let offset = self.text.as_ptr() as usize - self.index.base;
            let start = (offset + i) as u32;
            if let Ok(k) = self.index.ends.binary_search_by_key(&start, |&(s, _)| s) {
                return self.index.ends[k].1 as usize - offset;
            }
        }
        skip_value(bytes, i)
    }

    /// A value inside this one, from byte `start` to `end` of its text.
    fn slice(&self, start: usize, end: usize) -> Json<'a> {
        Json {
            text: &self.text[start..end],
            index: self.index,
        }
    }

    /// The value's JSON text.
    pub fn text(&self) -> &'a str {
        self.text
    }

    /// The value's JSON type.
    pub fn kind(&self) -> Kind {
        match self.text.as_bytes()[0] {
            b'n' => Kind::Null,
            b't' | b'f' => Kind::Bool,
            b'"' => Kind::String,
            b'[' => Kind::Array,
            b'{' => Kind::Object,
            _ => Kind::Number,
        }
    }

    /// True for `null`.
    pub fn is_null(&self) -> bool {
        self.kind() == Kind::Null
    }

    /// The error serde_json gives for this value where `expected` was wanted.
    pub fn invalid_type(&self, expected: &str) -> Error {
        let found = match self.kind() {
            Kind::Null => "null".to_string(),
            Kind::Bool => format!("boolean `{}`", self.text),
            Kind::String => format!("string {}", quoted(&self.string())),
            Kind::Array => "sequence".to_string(),
            Kind::Object => "map".to_string(),
            Kind::Number if self.text.contains(['.', 'e', 'E']) => format!("floating point `{}`", self.text),
            Kind::Number => format!("integer `{}`", self.text),
        };
        Error::at(
            format!("invalid type: {found}, expected {expected}"),
            self.text.as_bytes().as_ptr_range().end,
        )
    }

    /// An error about this value with `message`, positioned after it.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::at(message, self.text.as_bytes().as_ptr_range().end)
    }

    /// The string's content with escapes resolved; unchecked (empty) for other types.
    fn string(&self) -> Cow<'a, str> {
        match self.kind() {
            Kind::String => unescape(&self.text[1..self.text.len() - 1]),
            _ => Cow::Borrowed(""),
        }
    }

    /// The value as a string.
    pub fn as_str(&self) -> Result<Cow<'a, str>, Error> {
        match self.kind() {
            Kind::String => Ok(self.string()),
            _ => Err(self.invalid_type("a string")),
        }
    }

    /// The value as a boolean.
    pub fn as_bool(&self) -> Result<bool, Error> {
        match self.text {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.invalid_type("a boolean")),
        }
    }

    /// The value as an integer in `min..=max` (`expected` names the type, e.g. `i64`).
    pub fn as_integer(&self, min: i128, max: i128, expected: &str) -> Result<i128, Error> {
        if self.kind() != Kind::Number || self.text.contains(['.', 'e', 'E']) {
            return Err(self.invalid_type(expected));
        }
        let (negative, digits) = match self.text.strip_prefix('-') {
            Some(digits) => (true, digits),
            None => (false, self.text),
        };
        let mut value: i128 = 0;
        for digit in digits.bytes() {
            value = value.saturating_mul(10).saturating_add(i128::from(digit - b'0'));
        }
        let value = if negative { -value } else { value };
        if value < min || value > max {
            return Err(self.error(format!("invalid value: integer `{}`, expected {expected}", self.text)));
        }
        Ok(value)
    }

    /// The members of an object, in document order (none for other types).
    pub fn members(&self) -> Members<'a> {
        let at = if self.kind() == Kind::Object {
            1
        } else {
            self.text.len()
        };
        Members { within: *self, at }
    }

    /// The elements of an array, in order (none for other types).
    pub fn elements(&self) -> Elements<'a> {
        let at = if self.kind() == Kind::Array { 1 } else { self.text.len() };
        Elements { within: *self, at }
    }

    /// The value of member `key` of an object (the last, if repeated).
    pub fn get(&self, key: &str) -> Option<Json<'a>> {
        self.members().filter(|(k, _)| k == key).last().map(|(_, v)| v)
    }

    /// Reads the value as `T`.
    pub fn read<T: FromJson<'a>>(self) -> Result<T, Error> {
        T::from_json(self)
    }

    /// Reads an object's members by name: `each(index in names, value)` for every member named
    /// in `names`; a value of another type than an object is an error expecting `expected`, a
    /// repeated member is refused, and errors carry the member's path. Views of Kubernetes
    /// objects read leniently, as the API server's decoder does: `null` (for the object or a
    /// member) is absent and unknown members are skipped. Settings read `strict`ly: `null` is
    /// an error unless the field allows it, and an unknown member is refused with serde's
    /// `unknown field` message.
    pub fn read_members(
        self,
        expected: &str,
        names: &[&str],
        strict: bool,
        mut each: impl FnMut(usize, Json<'a>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        // One instance of the loop for every view and settings type: only `each` differs.
        self.read_members_dyn(expected, names, strict, &mut each)
    }

    fn read_members_dyn(
        self,
        expected: &str,
        names: &[&str],
        strict: bool,
        each: &mut dyn FnMut(usize, Json<'a>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        match self.kind() {
            Kind::Object => {}
            Kind::Null if !strict => return Ok(()),
            _ => return Err(self.invalid_type(expected)),
        }
        let mut seen = vec![false; names.len()];
        for (key, value) in self.members() {
            let Some(index) = names.iter().position(|name| *name == key) else {
                if strict {
                    return Err(value.error(unknown_field(&key, names)).in_key(&key));
                }
                continue;
            };
            if std::mem::replace(&mut seen[index], true) {
                return Err(value.error(format!("duplicate field `{key}`")));
            }
            if !strict && value.is_null() {
                continue;
            }
            each(index, value).map_err(|e| e.in_key(&key))?;
        }
        Ok(())
    }
}

/// Implements [`FromJson`] for a struct read member by member, starting from its `Default` (so
/// absent members keep their defaults): `lenient` for views of Kubernetes objects, `strict` for
/// settings (see [`Json::read_members`]). Each member is read with its field's `FromJson`, or
/// `with` a function from [`Json`] to the field. Errors name the type as serde does
/// (`struct Settings`).
///
/// ```ignore
/// from_json_members!(strict Settings {
///     "maxFindings" => max_findings,
///     "labels" => labels with string_map,
/// });
/// ```
macro_rules! from_json_members {
    (lenient $($rest:tt)*) => { $crate::json::from_json_members!(@impl false $($rest)*); };
    (strict $($rest:tt)*) => { $crate::json::from_json_members!(@impl true $($rest)*); };
    (@impl $strict:literal $ty:ident $(<$lt:lifetime>)? {
        $($json:literal => $field:ident $(with $reader:path)?),+ $(,)?
    }) => {
        impl<'a> $crate::json::FromJson<'a> for $ty $(<$lt>)? {
            fn from_json(value: $crate::json::Json<'a>) -> Result<Self, $crate::json::Error> {
                const FIELDS: &[&str] = &[$($json),+];
                let mut out = <Self as Default>::default();
                value.read_members(concat!("struct ", stringify!($ty)), FIELDS, $strict, |i, member| {
                    $(
                        if i == const { $crate::json::field_index(FIELDS, $json) } {
                            out.$field = $crate::json::from_json_members!(@read member $(, $reader)?);
                        }
                    )+
                    Ok(())
                })?;
                Ok(out)
            }
        }
    };
    (@read $member:ident) => { $member.read()? };
    (@read $member:ident, $reader:path) => { $reader($member)? };
}
pub(crate) use from_json_members;

/// Position of `name` in `fields` (at compile time, for [`from_json_members`]).
pub const fn field_index(fields: &[&str], name: &str) -> usize {
    let mut i = 0;
    while i < fields.len() {
        let (a, b) = (fields[i].as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return i;
            }
        }
        i += 1;
    }
    panic!("field not listed")
}

/// Reads a string that must be one of `names` and gives the value at the same position.
pub fn one_of<T: Copy>(value: Json<'_>, names: &[&str], values: &[T]) -> Result<T, Error> {
    let text = value.as_str()?;
    names
        .iter()
        .position(|name| *name == text)
        .map(|i| values[i])
        .ok_or_else(|| value.error(unknown_variant(&text, names)))
}

/// serde's message for an unknown field among `names`.
pub fn unknown_field(key: &str, names: &[&str]) -> String {
    format!("unknown field `{key}`, {}", expected_one_of(names))
}

/// serde's message for an unknown variant among `names`.
pub fn unknown_variant(value: &str, names: &[&str]) -> String {
    format!("unknown variant `{value}`, {}", expected_one_of(names))
}

/// serde's `expected ...` list: `` expected `a` ``, `` expected `a` or `b` ``, or
/// `` expected one of `a`, `b`, `c` ``.
fn expected_one_of(names: &[&str]) -> String {
    match names {
        [] => "there are no fields".to_string(),
        [one] => format!("expected `{one}`"),
        [a, b] => format!("expected `{a}` or `{b}`"),
        _ => {
            let mut out = String::from("expected one of ");
            for (i, name) in names.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('`');
                out.push_str(name);
                out.push('`');
            }
            out
        }
    }
}

/// Iterator over an object's members: key (escapes resolved) and value.
#[derive(Debug, Clone)]
pub struct Members<'a> {
    within: Json<'a>,
    at: usize,
}

impl<'a> Iterator for Members<'a> {
    type Item = (Cow<'a, str>, Json<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let text = self.within.text;
        let bytes = text.as_bytes();
        let mut i = skip_space(bytes, self.at);
        if i >= bytes.len() || bytes[i] != b'"' {
            self.at = bytes.len();
            return None;
        }
        let key_end = skip_string(bytes, i);
        let key = unescape(&text[i + 1..key_end - 1]);
        i = skip_space(bytes, skip_space(bytes, key_end) + 1);
        let end = self.within.end_of(i);
        let value = self.within.slice(i, end);
        let next = skip_space(bytes, end);
        self.at = if bytes.get(next) == Some(&b',') {
            next + 1
        } else {
            bytes.len()
        };
        Some((key, value))
    }
}

/// Iterator over an array's elements.
#[derive(Debug, Clone)]
pub struct Elements<'a> {
    within: Json<'a>,
    at: usize,
}

impl<'a> Iterator for Elements<'a> {
    type Item = Json<'a>;

    fn next(&mut self) -> Option<Json<'a>> {
        let bytes = self.within.text.as_bytes();
        let i = skip_space(bytes, self.at);
        if i >= bytes.len() || bytes[i] == b']' {
            self.at = bytes.len();
            return None;
        }
        let end = self.within.end_of(i);
        let next = skip_space(bytes, end);
        self.at = if bytes.get(next) == Some(&b',') {
            next + 1
        } else {
            bytes.len()
        };
        Some(self.within.slice(i, end))
    }
}

/// A type read from a [`Json`] value.
pub trait FromJson<'a>: Sized {
    /// Reads `value`; the error names the offending value's path below `value`.
    fn from_json(value: Json<'a>) -> Result<Self, Error>;
}

impl<'a> FromJson<'a> for Json<'a> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        Ok(value)
    }
}

impl<'a> FromJson<'a> for String {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value.as_str().map(Cow::into_owned)
    }
}

impl<'a> FromJson<'a> for Cow<'a, str> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value.as_str()
    }
}

impl<'a> FromJson<'a> for bool {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value.as_bool()
    }
}

impl<'a> FromJson<'a> for i64 {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value
            .as_integer(i128::from(i64::MIN), i128::from(i64::MAX), "i64")
            .map(|v| v as i64)
    }
}

impl<'a> FromJson<'a> for u32 {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value.as_integer(0, i128::from(u32::MAX), "u32").map(|v| v as u32)
    }
}

impl<'a> FromJson<'a> for u16 {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        value.as_integer(0, i128::from(u16::MAX), "u16").map(|v| v as u16)
    }
}

impl<'a, T: FromJson<'a>> FromJson<'a> for Option<T> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        if value.is_null() {
            Ok(None)
        } else {
            T::from_json(value).map(Some)
        }
    }
}

impl<'a, T: FromJson<'a>> FromJson<'a> for Vec<T> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        if value.kind() != Kind::Array {
            return Err(value.invalid_type("a sequence"));
        }
        value
            .elements()
            .enumerate()
            .map(|(i, element)| T::from_json(element).map_err(|e| e.in_index(i)))
            .collect()
    }
}

impl<'a, T: FromJson<'a>> FromJson<'a> for BTreeMap<String, T> {
    fn from_json(value: Json<'a>) -> Result<Self, Error> {
        if value.kind() != Kind::Object {
            return Err(value.invalid_type("a map"));
        }
        // Inserted one by one rather than collected: collecting sorts, and a sort is kilobytes of
        // code per element type in a module.
        let mut map = BTreeMap::new();
        for (key, member) in value.members() {
            let read = T::from_json(member).map_err(|e| e.in_key(&key))?;
            map.insert(key.into_owned(), read);
        }
        Ok(map)
    }
}

/// An object's text with member `key` set to the JSON text `new` (in the place of its first
/// occurrence, or last when absent) or, when `new` is `None`, removed; other members keep their
/// text. `None` for `object` stands for `{}`. Mutating checks edit objects this way rather than
/// building a tree of the whole object.
pub fn with_member(object: Option<Json<'_>>, key: &str, new: Option<&str>) -> String {
    let mut out = String::from("{");
    let mut pending = new;
    let push = |out: &mut String, name: &str, value: &str| {
        if out.len() > 1 {
            out.push(',');
        }
        write_string(out, name);
        out.push(':');
        out.push_str(value);
    };
    for (name, value) in object.iter().flat_map(Json::members) {
        if name != key {
            push(&mut out, &name, value.text());
        } else if let Some(new) = pending.take() {
            push(&mut out, key, new);
        }
    }
    if let Some(new) = pending {
        push(&mut out, key, new);
    }
    out.push('}');
    out
}

/// A whole JSON value, built in one pass for checks that walk every part of a document.
/// Objects keep their members in document order (duplicates kept); keys and strings borrow
/// from the text unless they hold escapes; containers nested deeper than the depth given to
/// [`tree`] are cut off unread.
#[derive(Debug, Clone, PartialEq)]
pub enum Tree<'t> {
    /// `null`, a boolean or a number.
    Scalar,
    /// A string.
    Str(Cow<'t, str>),
    /// An array.
    Array(Vec<Tree<'t>>),
    /// An object, members in document order.
    Object(Vec<(Cow<'t, str>, Tree<'t>)>),
    /// An array or object nested deeper than the depth limit; its content was skipped.
    TooDeep,
}

impl<'t> Tree<'t> {
    /// The value of `key` (the last one, as the API server's decoder keeps the last duplicate).
    pub fn get(&self, key: &str) -> Option<&Tree<'t>> {
        match self {
            Tree::Object(entries) => entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value at a path of object keys.
    pub fn at(&self, keys: &[&str]) -> Option<&Tree<'t>> {
        keys.iter().try_fold(self, |node, key| node.get(key))
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tree::Str(s) => Some(s),
            _ => None,
        }
    }
}

/// Checks `text` and builds its [`Tree`], cutting off arrays and objects nested deeper than
/// `max_depth` (the root is level 1). Recursion is bounded by `max_depth`.
pub fn tree(text: &str, max_depth: usize) -> Result<Tree<'_>, Error> {
    let start = parse(text)?.root.0;
    Ok(build(text, start, 1, max_depth).0)
}

impl<'a> Json<'a> {
    /// The value's [`Tree`], cut off below `max_depth` as [`tree`] does; the value was checked
    /// with its document, so this is one pass over its text.
    pub fn tree(&self, max_depth: usize) -> Tree<'a> {
        build(self.text, 0, 1, max_depth).0
    }
}

/// The tree of the checked value at byte `i` of `text`, at nesting `level`, and the index just
/// past it.
fn build(text: &str, mut i: usize, level: usize, max_depth: usize) -> (Tree<'_>, usize) {
    let bytes = text.as_bytes();
    let close = match bytes[i] {
        b'{' | b'[' if level > max_depth => return (Tree::TooDeep, skip_value(bytes, i)),
        b'"' => {
            let (end, escaped) = string_at(bytes, i);
            return (Tree::Str(string_value(text, i, end, escaped)), end);
        }
        b'{' => b'}',
        b'[' => b']',
        _ => return (Tree::Scalar, skip_value(bytes, i)),
    };
    let mut members = Vec::new();
    let mut elements = Vec::new();
    i = skip_space(bytes, i + 1);
    while bytes[i] != close {
        if close == b'}' {
            let (key_end, escaped) = string_at(bytes, i);
            let key = string_value(text, i, key_end, escaped);
            let (value, end) = build(
                text,
                skip_space(bytes, skip_space(bytes, key_end) + 1),
                level + 1,
                max_depth,
            );
            members.push((key, value));
            i = end;
        } else {
            let (value, end) = build(text, i, level + 1, max_depth);
            elements.push(value);
            i = end;
        }
        i = skip_space(bytes, i);
        if bytes[i] == b',' {
            i = skip_space(bytes, i + 1);
        }
    }
    let tree = if close == b'}' {
        Tree::Object(members)
    } else {
        Tree::Array(elements)
    };
    (tree, i + 1)
}

/// Writes `text` as a JSON string literal.
pub fn write_string(out: &mut String, text: &str) {
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => {
                out.push_str("\\u00");
                out.push(char::from_digit(c as u32 >> 4, 16).unwrap_or('0'));
                out.push(char::from_digit(c as u32 & 0xF, 16).unwrap_or('0'));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `text` as a JSON string literal.
pub fn quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    write_string(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    /// serde_json's error for `text` read as `T`, without its position.
    fn serde_message<T: serde::de::DeserializeOwned>(text: &str) -> String {
        let error = serde_json::from_str::<T>(text)
            .err()
            .expect("serde_json accepts it")
            .to_string();
        error.split(" at line ").next().unwrap_or_default().to_string()
    }

    #[test]
    fn accepts_what_serde_json_accepts() {
        let documents = [
            "null",
            " true ",
            "-0.5e+3",
            "[]",
            "{}",
            r#"{"a": [1, 2, {"b": "c\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"}], "d": {}}"#,
            "[[[[]]], {\"\": null}]",
        ];
        for text in documents {
            let document = parse(text).unwrap_or_else(|e| panic!("{text}: {e:?}"));
            serde_json::from_str::<serde_json::Value>(text).unwrap();
            assert_eq!(document.root().text(), text.trim());
        }
    }

    #[test]
    fn refuses_what_serde_json_refuses_with_its_message() {
        let documents = [
            "",
            "{",
            "[1,]",
            "{\"a\":1,}",
            "{\"a\" 1}",
            "{1: 2}",
            "[1 2]",
            "{\"a\": 1 \"b\"}",
            "tru",
            "nul x",
            "01",
            "1.",
            "1e",
            "-",
            "\"a",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\u{1}\"",
            "[1] 2",
            "{\"a\": }",
            "[",
            " ",
            "[1",
            "{\"a\"",
            "{\"a\":1",
            "{,",
            "[,]",
            "1.2.3",
            "\"\\ud800\"",
            "\"\\udc00\"",
            "\"\\ud800\\u0041\"",
            "-a",
            "{\"a\":1}}",
        ];
        let mismatches: Vec<String> = documents
            .iter()
            .filter_map(|text| {
                let ours = parse(text).unwrap_err().located(text);
                let theirs = serde_json::from_str::<serde_json::Value>(text).unwrap_err().to_string();
                (ours != theirs).then(|| format!("{text:?}: ours {ours:?}, serde_json {theirs:?}"))
            })
            .collect();
        assert!(mismatches.is_empty(), "{mismatches:#?}");
    }

    #[test]
    fn deep_nesting_is_checked_without_recursion() {
        let deep = format!("{}{}", "[".repeat(200_000), "]".repeat(200_000));
        assert!(parse(&deep).is_ok());
        assert!(parse(&deep[1..]).is_err());
    }

    #[test]
    fn members_elements_and_get() {
        let root_document = parse(r#"{"a": {"x": [1, "two", null]}, "b\u0041": "y", "a": 3}"#).unwrap();
        let root = root_document.root();
        let keys: Vec<String> = root.members().map(|(k, _)| k.into_owned()).collect();
        assert_eq!(keys, ["a", "bA", "a"]);
        assert_eq!(root.get("a").unwrap().text(), "3");
        assert_eq!(root.get("bA").unwrap().as_str().unwrap(), "y");
        let first = root.members().next().unwrap().1;
        let items: Vec<&str> = first.get("x").unwrap().elements().map(|e| e.text()).collect();
        assert_eq!(items, ["1", "\"two\"", "null"]);
        assert!(root.get("missing").is_none());
        assert_eq!(parse("[]").unwrap().root().elements().count(), 0);
        assert_eq!(parse("{}").unwrap().root().members().count(), 0);
    }

    #[test]
    fn type_errors_read_as_serde_json_s() {
        fn same<T, S>(text: &str)
        where
            T: for<'a> FromJson<'a> + std::fmt::Debug,
            S: serde::de::DeserializeOwned + std::fmt::Debug,
        {
            let ours = parse(text).unwrap().root().read::<T>().unwrap_err();
            assert_eq!(ours.message, serde_message::<S>(text), "{text}");
        }
        same::<String, String>("3");
        same::<String, String>("1.16");
        same::<String, String>("true");
        same::<String, String>("null");
        same::<String, String>("[1]");
        same::<String, String>("{}");
        same::<bool, bool>("\"yes\"");
        same::<i64, i64>("\"900\"");
        same::<i64, i64>("1.5");
        same::<u32, u32>("-1");
        same::<u32, u32>("4294967296");
        same::<Vec<String>, Vec<String>>("\"sh\"");
        same::<BTreeMap<String, String>, BTreeMap<String, String>>("[]");
    }

    #[test]
    fn errors_carry_the_path_and_serde_json_s_position() {
        let text = "{\"a\": [\"x\",\n {\"b\": 3}]}";
        #[derive(Debug, Default)]
        struct B(String);
        impl<'a> FromJson<'a> for B {
            fn from_json(value: Json<'a>) -> Result<Self, Error> {
                let mut b = B::default();
                value.read_members("struct B", &["b"], true, |_, v| {
                    b.0 = v.read()?;
                    Ok(())
                })?;
                Ok(b)
            }
        }
        let root_document = parse(text).unwrap();
        let root = root_document.root();
        let error = root
            .get("a")
            .unwrap()
            .elements()
            .nth(1)
            .unwrap()
            .read::<B>()
            .unwrap_err();
        assert_eq!(error.path, "b");
        let error = error.in_index(1).in_key("a");
        assert_eq!(error.path, "a[1].b");
        assert_eq!(
            error.with_path(),
            "`a[1].b`: invalid type: integer `3`, expected a string"
        );
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Theirs {
            a: (String, TheirB),
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct TheirB {
            b: String,
        }
        let theirs = serde_json::from_str::<Theirs>(text).unwrap_err();
        assert_eq!(error.located(text), theirs.to_string());
    }

    #[test]
    fn unknown_and_repeated_members() {
        let root_document = parse(r#"{"a": 1, "c": 2}"#).unwrap();
        let root = root_document.root();
        let strict = root.read_members("struct X", &["a", "b"], true, |_, _| Ok(()));
        assert_eq!(strict.unwrap_err().message, "unknown field `c`, expected `a` or `b`");
        assert!(root.read_members("struct X", &["a", "b"], false, |_, _| Ok(())).is_ok());
        let repeated_document = parse(r#"{"a": 1, "a": 2}"#).unwrap();
        let repeated = repeated_document.root();
        let error = repeated
            .read_members("struct X", &["a"], false, |_, _| Ok(()))
            .unwrap_err();
        assert_eq!(error.message, "duplicate field `a`");
        assert_eq!(
            unknown_variant("x", &["a", "b", "c"]),
            "unknown variant `x`, expected one of `a`, `b`, `c`"
        );
        let null_document = parse("null").unwrap();
        let null = null_document.root();
        assert!(null.read_members("struct X", &["a"], false, |_, _| Ok(())).is_ok());
        let error = null.read_members("struct X", &["a"], true, |_, _| Ok(())).unwrap_err();
        assert_eq!(error.message, "invalid type: null, expected struct X");
    }

    #[test]
    fn members_are_set_and_removed_in_place() {
        let object_document = parse(r#"{"a": 1, "b": {"c": [2]}, "a": 3, "d\u0022": null}"#).unwrap();
        let object = object_document.root();
        assert_eq!(
            with_member(Some(object), "a", Some("true")),
            r#"{"a":true,"b":{"c": [2]},"d\"":null}"#
        );
        assert_eq!(with_member(Some(object), "a", None), r#"{"b":{"c": [2]},"d\"":null}"#);
        assert_eq!(
            with_member(Some(object), "e", Some("[]")),
            r#"{"a":1,"b":{"c": [2]},"a":3,"d\"":null,"e":[]}"#
        );
        assert_eq!(with_member(None, "e", Some("\"x\"")), r#"{"e":"x"}"#);
        assert_eq!(with_member(None, "e", None), "{}");
    }

    #[test]
    fn trees_keep_order_and_cut_off_deep_containers() {
        let text = r#"{"b": [1, "x\u0041", {}], "a": {"c": [[[]]]}, "b": null}"#;
        let full = tree(text, 10).unwrap();
        let Tree::Object(members) = &full else {
            panic!("{full:?}")
        };
        let keys: Vec<&str> = members.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "a", "b"]);
        assert_eq!(full.get("b"), Some(&Tree::Scalar));
        let Tree::Array(items) = &members[0].1 else { panic!() };
        assert_eq!(items[1].as_str(), Some("xA"));
        assert_eq!(items[2], Tree::Object(Vec::new()));
        assert_eq!(
            full.at(&["a", "c"]).unwrap(),
            &Tree::Array(vec![Tree::Array(vec![Tree::Array(Vec::new())])])
        );
        let cut = tree(text, 3).unwrap();
        assert_eq!(cut.at(&["a", "c"]).unwrap(), &Tree::Array(vec![Tree::TooDeep]));
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(matches!(tree(&deep, 100), Ok(Tree::Array(_))));
        assert!(tree("[1,", 5).is_err());
    }

    #[test]
    fn strings_round_trip_through_the_writer() {
        for text in ["plain", "quote \" and \\ slash", "\n\t\r\u{8}\u{c}\u{1}\u{1f}", "é 😀"] {
            let literal = quoted(text);
            assert_eq!(literal, serde_json::to_string(text).unwrap());
            assert_eq!(parse(&literal).unwrap().root().as_str().unwrap(), text);
        }
    }
}
