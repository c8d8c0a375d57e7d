//! The text the Kubernetes API server writes back for a `resource.Quantity`: an exact port of
//! `resource.ParseQuantity(s)` followed by `String()` (the JSON text `MarshalJSON` writes), from
//! k8s.io/apimachinery `pkg/api/resource/quantity.go` (with `amount.go`, `suffix.go` and `math.go`)
//! at commit `eed236ceee2c19c2753a3d93ac0631dc20750454`.
//!
//! # What the server does
//! - **It may keep the text.** A quantity parsed on Go's fast path (at most 18 digits, at least
//!   nano precision) whose text is "close enough" to canonical is cached and written back byte for
//!   byte: a decimal one when its scale is a multiple of 3 and its digits neither start with `0`
//!   (after the leading zeros of the integer part) nor end in `000` (`1.500`, `+1`, `00100m`,
//!   `1.`, `1E3`); a binary one when its digits are not a multiple of 8 (`500Mi`, `010Mi`).
//! - **Otherwise it recomputes a canonical text** in the input's format, which is sticky: decimal
//!   SI never becomes binary (`1048576000` → `1048576k`), `e` notation stays `e` notation
//!   (`5e-1` → `500e-3`, but exponent 0 prints none: `1e1` → `10`), and binary falls back to
//!   decimal SI when the value is below 1024 or not an integer (`0.5Ki` → `512`, `1.1Ki` →
//!   `1126400m`). The mantissa is an integer and the exponent the largest multiple of 3 that keeps
//!   it one (`1.5Gi` → `1536Mi`, `1000m` → `1`).
//! - **Precision is 1n**: a value with digits below 10⁻⁹ is rounded up in magnitude to the next
//!   nano (`0.1n` → `1n`, `1e-10` → `1e-9`).
//! - **Binary SI is capped** at 2⁶³-1 (`8Ei` → `9223372036854775807`); decimal is not
//!   (`99999999999999999999` stays), but a decimal SI value whose exponent passes 18 loses its
//!   suffix, an apimachinery bug (`1000E` → `1`).
//! - **It refuses** a text outside `^[+-]?[0-9]*(\.[0-9]*)?[eEinumkKMGTP]*[+-]?[0-9]*$`
//!   ([`Invalid::Format`]: `1.2.3`, `1e3m`), a suffix that is none of `n u m k M G T P E Ki Mi
//!   Gi Ti Pi Ei` nor `e`/`E` and an int64 exponent ([`Invalid::Suffix`]: `1K`, `1ki`, `1e`), and
//!   a number without digits that misses the fast path ([`Invalid::Numeric`]: `e-10`, `Pi`).
//!
//! # Input
//! [`stored`] takes a JSON string's contents (decoded): the server trims white space (Go's
//! `strings.TrimSpace`, Unicode's `White_Space`, the same set as Rust's `str::trim`), but it reads
//! the raw JSON bytes, escapes included. A control character must be escaped in JSON, so the
//! server sees a backslash and refuses the text; U+2028 and U+2029 are escaped by Go's encoder
//! (kubectl, Argo CD, Flux) but not by every one, so a text they would trim is not judged. A bare
//! JSON number reaches the same parser as its literal text (`3072` → `"3072"`, `0.5` → `"500m"`,
//! `1e3` → `"1e3"`): [`stored_number`] takes that literal, never a float's formatting.
//!
//! # Exactness and limits
//! Everything is computed exactly: decimal values as digit strings with an exponent, binary ones
//! (at most 2⁶³-1 before the cap) as u128 counts of nano-units. The one thing not modelled is what
//! Go does at absurd sizes, where its int32 exponents wrap (the `e` exponent is parsed as int64
//! and truncated to int32) and its big-number arithmetic runs for minutes. So a text longer than
//! [`MAX_LEN`] bytes, or with an `e` exponent beyond ±[`MAX_EXPONENT`], is
//! [`Stored::NotJudged`] (within those bounds the truncation is the identity). An exponent that
//! does not fit an int64 is [`Invalid::Suffix`], as in Go.
//!
//! # Tests
//! The tables `quantity-go.tsv` (hand-picked inputs) and `quantity-go-fuzz.tsv` (every 10th row
//! of 20,000 generated ones) are Go's own output: each input run through that apimachinery
//! commit's `UnmarshalJSON` and `MarshalJSON` (Go 1.19). A leading `#` marks a bare JSON number.

use std::fmt::{self, Write as _};

/// Longest text (in bytes, white space trimmed) that is judged.
pub const MAX_LEN: usize = 10_000;

/// Largest magnitude of an `e` exponent that is judged.
pub const MAX_EXPONENT: u64 = 10_000;

/// The largest value of a binary SI quantity (Go's cap, `math.MaxInt64`), in nano-units.
const BINARY_CAP_NANO: u128 = (i64::MAX as u128) * NANO;

/// Nano-units in one unit.
const NANO: u128 = 1_000_000_000;

/// What the API server writes back for a quantity it accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored<'a> {
    /// The server caches the text (white space trimmed) and writes it back unchanged.
    Verbatim(&'a str),
    /// The server writes back this canonical text (which may still equal the input).
    Canonical(String),
    /// Outside what this module models exactly: no verdict.
    NotJudged(NotJudged),
}

impl Stored<'_> {
    /// The text the server writes back, or `None` when not judged.
    pub fn text(&self) -> Option<&str> {
        match self {
            Stored::Verbatim(text) => Some(*text),
            Stored::Canonical(text) => Some(text.as_str()),
            Stored::NotJudged(_) => None,
        }
    }
}

/// Why a quantity is not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotJudged {
    /// The text is longer than [`MAX_LEN`] bytes.
    Length,
    /// The `e` exponent is beyond ±[`MAX_EXPONENT`].
    Exponent,
    /// U+2028 or U+2029 would be trimmed, which depends on how the client escaped them.
    LineSeparator,
    /// [`stored_number`] was given something that is not a JSON number.
    NotJsonNumber,
}

/// Why the API server refuses a quantity: one of Go's three parse errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalid {
    /// `ErrFormatWrong`: empty, or not number-then-suffix.
    Format,
    /// `ErrSuffix`: not a known suffix, nor `e`/`E` and an int64 exponent.
    Suffix,
    /// `ErrNumeric`: no digits, where Go needs them.
    Numeric,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Invalid::Format => {
                "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            }
            Invalid::Suffix => "unable to parse quantity's suffix",
            Invalid::Numeric => "unable to parse numeric part of quantity",
        })
    }
}

impl std::error::Error for Invalid {}

/// The text the API server stores for a quantity given as a JSON string (its decoded contents).
pub fn stored(text: &str) -> Result<Stored<'_>, Invalid> {
    if text.bytes().any(|b| b < 0x20) {
        return Err(Invalid::Format);
    }
    let line_separator = |c: char| c == '\u{2028}' || c == '\u{2029}';
    let trims_separator = text.chars().take_while(|c| c.is_whitespace()).any(line_separator)
        || text.chars().rev().take_while(|c| c.is_whitespace()).any(line_separator);
    let stored = parse(text.trim())?;
    if trims_separator && stored.text().is_some() {
        return Ok(Stored::NotJudged(NotJudged::LineSeparator));
    }
    Ok(stored)
}

/// The text the API server stores for a quantity given as a bare JSON number (its literal text).
pub fn stored_number(literal: &str) -> Result<Stored<'_>, Invalid> {
    if !is_json_number(literal.as_bytes()) {
        return Ok(Stored::NotJudged(NotJudged::NotJsonNumber));
    }
    parse(literal)
}

/// The three formats of apimachinery, chosen by the suffix and kept through canonicalisation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    BinarySi,
    DecimalExponent,
}

/// A text split as `parseQuantityString` splits it.
struct Split<'a> {
    negative: bool,
    /// Whether the number part has a digit at all.
    has_digits: bool,
    /// The integer digits, leading zeros removed; `0` when there are none.
    num: &'a [u8],
    /// The fraction digits.
    denom: &'a [u8],
    suffix: &'a [u8],
}

/// `ParseQuantity` then `String`, on a trimmed text.
fn parse(s: &str) -> Result<Stored<'_>, Invalid> {
    if s.is_empty() {
        return Err(Invalid::Format);
    }
    if s == "0" {
        return Ok(Stored::Verbatim(s));
    }
    let split = split(s.as_bytes())?;
    let (format, exponent) = interpret(split.suffix)?;
    if s.len() > MAX_LEN {
        return Ok(Stored::NotJudged(NotJudged::Length));
    }
    if exponent.unsigned_abs() > MAX_EXPONENT {
        return Ok(Stored::NotJudged(NotJudged::Exponent));
    }
    // Both bounded by 10,000 above: no overflow, and Go's int32 arithmetic does not wrap.
    let (num_len, denom_len) = (split.num.len() as i64, split.denom.len() as i64);

    // Go's fast path: an int64 mantissa and a base-10 scale, and the only place a text is kept.
    let (precision, multiplier, scale) = match format {
        Format::DecimalSi | Format::DecimalExponent => (18 - num_len - denom_len, 1, exponent),
        // `15 - len(num) - int32(float32(exponent)*3/10) - 1`: exact for 10, 20, ..., 60.
        Format::BinarySi if split.denom.is_empty() => (15 - num_len - exponent * 3 / 10 - 1, 1i64 << exponent, 0),
        Format::BinarySi => (-1, 1, 0),
    };
    let scale = scale - denom_len;
    let fast = if precision >= 0 && scale >= -9 {
        // At most 18 digits: always an int64.
        let shifted = split
            .num
            .iter()
            .chain(split.denom)
            .fold(0i64, |v, d| v * 10 + i64::from(d - b'0'));
        shifted.checked_mul(multiplier).map(|_| shifted)
    } else {
        None
    };
    if let Some(shifted) = fast {
        let keep = match format {
            Format::BinarySi => shifted & 7 != 0,
            Format::DecimalSi | Format::DecimalExponent => {
                let zeros = split
                    .num
                    .iter()
                    .chain(split.denom)
                    .rev()
                    .take_while(|&&d| d == b'0')
                    .count();
                scale % 3 == 0 && zeros < 3 && split.num.first() != Some(&b'0')
            }
        };
        if keep {
            return Ok(Stored::Verbatim(s));
        }
    } else if !split.has_digits {
        // Go's slow path (`inf.Dec.SetString`) needs a digit.
        return Err(Invalid::Numeric);
    }

    let text = match format {
        Format::BinarySi => binary_text(split.negative, split.num, split.denom, exponent),
        Format::DecimalSi | Format::DecimalExponent => {
            let digits: Vec<u8> = split
                .num
                .iter()
                .chain(split.denom)
                .copied()
                .skip_while(|&d| d == b'0')
                .collect();
            decimal_text(split.negative, digits, exponent - denom_len, format)
        }
    };
    Ok(Stored::Canonical(text))
}

/// `parseQuantityString`: sign, integer digits, fraction digits and suffix, or a format error.
fn split(s: &[u8]) -> Result<Split<'_>, Invalid> {
    let (negative, unsigned) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    let rest = skip(unsigned, |b| b == b'0');
    let has_zero = rest.len() < unsigned.len();
    let after_num = skip(rest, |b| b.is_ascii_digit());
    let num = &rest[..rest.len() - after_num.len()];
    let (denom, after_denom) = match after_num.split_first() {
        Some((b'.', fraction)) => {
            let after = skip(fraction, |b| b.is_ascii_digit());
            (&fraction[..fraction.len() - after.len()], after)
        }
        _ => (&b""[..], after_num),
    };
    let letters = skip(after_denom, |b| b"eEinumkKMGTP".contains(&b));
    let exponent = match letters.split_first() {
        Some((b'+' | b'-', digits)) => digits,
        _ => letters,
    };
    if !exponent.iter().all(u8::is_ascii_digit) {
        return Err(Invalid::Format);
    }
    let has_digits = has_zero || !num.is_empty() || !denom.is_empty();
    let num: &[u8] = if num.is_empty() { b"0" } else { num };
    Ok(Split {
        negative,
        has_digits,
        num,
        denom,
        suffix: after_denom,
    })
}

/// `s` without its leading bytes that match `f`.
fn skip(s: &[u8], f: impl Fn(u8) -> bool) -> &[u8] {
    let n = s.iter().take_while(|&&b| f(b)).count();
    s.get(n..).unwrap_or_default()
}

/// `suffixer.interpret`: the format and the exponent (of 10, or of 2 for binary SI).
fn interpret(suffix: &[u8]) -> Result<(Format, i64), Invalid> {
    let decimal = |exponent| Ok((Format::DecimalSi, exponent));
    let binary = |exponent| Ok((Format::BinarySi, exponent));
    match suffix {
        b"" => decimal(0),
        b"n" => decimal(-9),
        b"u" => decimal(-6),
        b"m" => decimal(-3),
        b"k" => decimal(3),
        b"M" => decimal(6),
        b"G" => decimal(9),
        b"T" => decimal(12),
        b"P" => decimal(15),
        b"E" => decimal(18),
        b"Ki" => binary(10),
        b"Mi" => binary(20),
        b"Gi" => binary(30),
        b"Ti" => binary(40),
        b"Pi" => binary(50),
        b"Ei" => binary(60),
        [b'e' | b'E', rest @ ..] if !rest.is_empty() => parse_int64(rest)
            .map(|e| (Format::DecimalExponent, e))
            .ok_or(Invalid::Suffix),
        _ => Err(Invalid::Suffix),
    }
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and at least one digit, within int64.
fn parse_int64(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    if digits.is_empty() {
        return None;
    }
    let mut magnitude: i128 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        magnitude = magnitude * 10 + i128::from(d - b'0');
        if magnitude > 1 << 63 {
            return None;
        }
    }
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

/// The canonical text of `±digits × 10^exponent` (digits without leading zeros) in a decimal
/// format, rounded up to 1n first.
fn decimal_text(negative: bool, mut digits: Vec<u8>, mut exponent: i64, format: Format) -> String {
    if digits.is_empty() {
        return "0".to_owned();
    }
    if exponent < -9 {
        let dropped = usize::try_from(-9 - exponent).unwrap_or(usize::MAX);
        match digits.len().checked_sub(dropped) {
            Some(kept) if kept > 0 => {
                let fraction = digits.split_off(kept);
                if fraction.iter().any(|&d| d != b'0') {
                    increment(&mut digits);
                }
            }
            // Every digit is below 1n and one is not zero (no leading zeros): 1n.
            _ => digits = vec![b'1'],
        }
        exponent = -9;
    }
    while digits.len() > 1 && digits.last() == Some(&b'0') {
        digits.pop();
        exponent += 1;
    }
    // Floor the exponent to a multiple of 3, the mantissa taking the zeros.
    let pad = exponent.rem_euclid(3);
    exponent -= pad;
    let mut text = String::with_capacity(digits.len() + 8);
    if negative {
        text.push('-');
    }
    text.extend(digits.iter().map(|&d| char::from(d)));
    text.extend(std::iter::repeat_n('0', pad as usize));
    match format {
        Format::DecimalExponent if exponent != 0 => {
            let _ = write!(text, "e{exponent}");
        }
        Format::DecimalExponent => {}
        // Past `E` (10^18) there is no suffix, and Go writes the bare mantissa.
        _ => text.push_str(match exponent {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        }),
    }
    text
}

/// Adds one to a decimal digit string.
fn increment(digits: &mut Vec<u8>) {
    for d in digits.iter_mut().rev() {
        if *d == b'9' {
            *d = b'0';
        } else {
            *d += 1;
            return;
        }
    }
    digits.insert(0, b'1');
}

/// The canonical text of `±num.denom × 2^exponent` in binary SI: rounded up to 1n, capped at
/// 2⁶³-1, and written in decimal SI below 1024 or when not an integer.
fn binary_text(negative: bool, num: &[u8], denom: &[u8], exponent: i64) -> String {
    let power = 1u128 << exponent;
    let nano = whole_nano(num, power)
        .and_then(|whole| {
            let (fraction, exact) = fraction_nano(denom, power * NANO);
            whole.checked_add(fraction + u128::from(!exact))
        })
        .filter(|&nano| nano <= BINARY_CAP_NANO)
        .unwrap_or(BINARY_CAP_NANO);
    if nano == 0 {
        return "0".to_owned();
    }
    if nano < 1024 * NANO || !nano.is_multiple_of(NANO) {
        return decimal_text(negative, digits_of(nano), -9, Format::DecimalSi);
    }
    let (mut mantissa, mut power_of_1024) = (nano / NANO, 0);
    while mantissa.is_multiple_of(1024) {
        mantissa /= 1024;
        power_of_1024 += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .get(power_of_1024)
        .unwrap_or(&"");
    let mut text = String::with_capacity(24);
    if negative {
        text.push('-');
    }
    text.extend(digits_of(mantissa).into_iter().map(char::from));
    text.push_str(suffix);
    text
}

/// The decimal digits of `n` (without `u128`'s `Display`, which costs the module kilobytes).
fn digits_of(mut n: u128) -> Vec<u8> {
    let mut digits = Vec::with_capacity(40);
    loop {
        digits.push(b'0' + (n % 10) as u8);
        n /= 10;
        if n == 0 {
            break;
        }
    }
    digits.reverse();
    digits
}

/// `num × power` in nano-units, or `None` past the binary cap.
fn whole_nano(num: &[u8], power: u128) -> Option<u128> {
    if num.len() > 20 {
        return None; // at least 10^20, times at least 1024
    }
    let whole = num.iter().fold(0u128, |v, &d| v * 10 + u128::from(d - b'0'));
    whole
        .checked_mul(power)?
        .checked_mul(NANO)
        .filter(|&nano| nano <= BINARY_CAP_NANO)
}

/// `floor(0.denom × factor)` and whether it is exact, for `factor` up to 2⁶⁰·10⁹.
fn fraction_nano(denom: &[u8], factor: u128) -> (u128, bool) {
    // From the last digit: y = d × factor + y' / 10, where y is the fraction from this digit on
    // times 10 × factor; keep floor(y) (floor(a + b/10) = a + floor(floor(b)/10)) and whether
    // every division was exact. floor(y) stays below 10 × factor.
    let (mut y, mut exact) = (0u128, true);
    for &d in denom.iter().rev() {
        exact &= y.is_multiple_of(10);
        y = u128::from(d - b'0') * factor + y / 10;
    }
    (y / 10, exact && y.is_multiple_of(10))
}

/// Whether `s` is a JSON number (RFC 8259): `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
fn is_json_number(s: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let s = s.strip_prefix(b"-").unwrap_or(s);
    let s = match s.split_first() {
        Some((b'0', rest)) => rest,
        Some((b'1'..=b'9', rest)) => rest.get(digits(rest)..).unwrap_or_default(),
        _ => return false,
    };
    let s = match s.split_first() {
        Some((b'.', rest)) if digits(rest) > 0 => rest.get(digits(rest)..).unwrap_or_default(),
        Some((b'.', _)) => return false,
        _ => s,
    };
    let s = match s.split_first() {
        Some((b'e' | b'E', rest)) => {
            let rest = match rest.split_first() {
                Some((b'+' | b'-', rest)) => rest,
                _ => rest,
            };
            if digits(rest) == 0 {
                return false;
            }
            rest.get(digits(rest)..).unwrap_or_default()
        }
        _ => s,
    };
    s.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows of a Go table: input, and Go's output (`None` for an error); `# ` lines are
    /// comments, `#` before an input marks a bare JSON number.
    fn rows(table: &str) -> impl Iterator<Item = (&str, Option<&str>)> {
        table
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with("# "))
            .map(|line| {
                let (input, output) = line.split_once('\t').expect("a tab");
                let output = (output != "ERROR").then(|| {
                    output
                        .strip_prefix('"')
                        .and_then(|o| o.strip_suffix('"'))
                        .expect("a quoted output")
                });
                (input, output)
            })
    }

    /// What this module says for an input of a Go table, in the table's notation.
    fn ours(input: &str) -> Option<String> {
        let result = match input.strip_prefix('#') {
            Some(literal) => stored_number(literal),
            None => stored(input),
        };
        match result {
            Ok(Stored::NotJudged(why)) => Some(format!("not judged: {why:?}")),
            Ok(stored) => stored.text().map(str::to_owned),
            Err(_) => None,
        }
    }

    /// Every row of a table, with the rows that differ listed.
    fn check_table(table: &str, at_least: usize) {
        let mut count = 0;
        let mut wrong = Vec::new();
        for (input, go) in rows(table) {
            count += 1;
            let ours = ours(input);
            if ours.as_deref() != go {
                wrong.push(format!("{input:?}: Go {go:?}, ours {ours:?}"));
            }
        }
        assert!(count >= at_least, "only {count} rows");
        assert!(
            wrong.is_empty(),
            "{} of {count} rows differ:\n{}",
            wrong.len(),
            wrong.join("\n")
        );
    }

    #[test]
    fn go_table() {
        check_table(include_str!("quantity-go.tsv"), 190);
    }

    #[test]
    fn go_fuzz_table() {
        check_table(include_str!("quantity-go-fuzz.tsv"), 2_000);
    }

    #[test]
    fn canonical_texts_are_kept() {
        // Go's output parses back to itself.
        for table in [include_str!("quantity-go.tsv"), include_str!("quantity-go-fuzz.tsv")] {
            for (_, go) in rows(table) {
                if let Some(go) = go {
                    assert_eq!(stored(go).ok().as_ref().and_then(Stored::text), Some(go));
                }
            }
        }
    }

    #[test]
    fn verbatim_or_canonical() {
        assert_eq!(stored(" 1.500 "), Ok(Stored::Verbatim("1.500")));
        assert_eq!(stored("+500Mi"), Ok(Stored::Verbatim("+500Mi")));
        assert_eq!(stored("1000Ki"), Ok(Stored::Canonical("1000Ki".to_owned())));
        assert_eq!(stored("3072Mi"), Ok(Stored::Canonical("3Gi".to_owned())));
        assert_eq!(stored_number("3072"), Ok(Stored::Verbatim("3072")));
        assert_eq!(stored_number("0.5"), Ok(Stored::Canonical("500m".to_owned())));
    }

    #[test]
    fn go_errors() {
        for (text, error) in [
            ("", Invalid::Format),
            ("   ", Invalid::Format),
            ("1KB", Invalid::Format),
            ("1.2.3", Invalid::Format),
            ("1e3m", Invalid::Format),
            ("1 k", Invalid::Format),
            ("\t1", Invalid::Format),
            ("1\n", Invalid::Format),
            ("½", Invalid::Format),
            ("1K", Invalid::Suffix),
            ("1ki", Invalid::Suffix),
            ("1e", Invalid::Suffix),
            ("1e+", Invalid::Suffix),
            ("1ee3", Invalid::Suffix),
            ("1e9223372036854775808", Invalid::Suffix),
            ("e-10", Invalid::Numeric),
            ("+.e-12", Invalid::Numeric),
            ("Pi", Invalid::Numeric),
            ("-Ei", Invalid::Numeric),
        ] {
            assert_eq!(stored(text), Err(error), "{text:?}");
        }
        // Without digits, Go's fast path still takes these as zero.
        for text in ["+", "-", ".", "e-9", "k", "Ti", "-.Ki"] {
            assert_eq!(stored(text), Ok(Stored::Canonical("0".to_owned())), "{text:?}");
        }
    }

    #[test]
    fn limits() {
        let at = |text: &str| stored(text).ok().as_ref().and_then(Stored::text).map(str::to_owned);
        assert_eq!(at("1e9999").as_deref(), Some("1e9999"));
        assert_eq!(at("1e10000").as_deref(), Some("10e9999"));
        assert_eq!(at("10e10000").as_deref(), Some("100e9999"));
        assert_eq!(at("1.5e-10000").as_deref(), Some("1e-9"));
        assert_eq!(
            at("1.00000000000000000001e10000").as_deref(),
            Some("10000000000000000000100e9978")
        );
        assert_eq!(stored("1e10001"), Ok(Stored::NotJudged(NotJudged::Exponent)));
        assert_eq!(
            stored("1e-9223372036854775808"),
            Ok(Stored::NotJudged(NotJudged::Exponent))
        );
        let long = format!("1{}", "0".repeat(MAX_LEN - 1));
        assert_eq!(at(&long).as_deref(), Some("1"));
        let too_long = format!("1{}", "0".repeat(MAX_LEN));
        assert_eq!(stored(&too_long), Ok(Stored::NotJudged(NotJudged::Length)));
        assert_eq!(stored(&format!("{too_long}x")), Err(Invalid::Format));
        assert_eq!(at(&format!("0.{}1Ei", "0".repeat(5_000))).as_deref(), Some("1n"));
        assert_eq!(
            at(&format!("{}1Ki", "9".repeat(40))).as_deref(),
            Some("9223372036854775807")
        );
        assert_eq!(at("-16Ei").as_deref(), Some("-9223372036854775807"));
        assert_eq!(
            at("7.999999999999999999Ei").as_deref(),
            Some("9223372036854775806847078496n")
        );
        assert_eq!(at("0.99999999999999999999Ki").as_deref(), Some("1Ki"));
        assert_eq!(at("0.0000000000001Ki").as_deref(), Some("1n"));
    }

    #[test]
    fn white_space_and_escapes() {
        assert_eq!(stored("\u{a0}1\u{3000}"), Ok(Stored::Verbatim("1")));
        assert_eq!(stored("\u{2028}1"), Ok(Stored::NotJudged(NotJudged::LineSeparator)));
        assert_eq!(stored("\u{2029}1x"), Err(Invalid::Format));
        assert_eq!(stored_number(" 1"), Ok(Stored::NotJudged(NotJudged::NotJsonNumber)));
        for literal in ["01", "1.", ".5", "+1", "1e", "1e+", "-", "", "Infinity", "NaN", "1k"] {
            assert_eq!(
                stored_number(literal),
                Ok(Stored::NotJudged(NotJudged::NotJsonNumber)),
                "{literal:?}"
            );
        }
        for literal in ["0", "-0", "1.5e+3", "-0.0E-0", "12345678901234567890123"] {
            assert!(stored_number(literal).is_ok_and(|s| s.text().is_some()), "{literal:?}");
        }
    }

    #[test]
    fn hostile_inputs_do_not_panic() {
        // A fixed pseudo-random walk over quantity-like pieces, multi-byte characters included.
        let pieces: Vec<&str> =
            "0|1|9|00|99999999999|.|+|-|e|E|i|n|u|m|k|K|M|G|T|P|Ki|Ei|e-|e+|e9|e-12|e21| |\u{a0}|é|\u{2028}|\t|x"
                .split('|')
                .collect();
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..200_000 {
            let mut text = String::new();
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let mut bits = state;
            for _ in 0..(bits % 7) {
                bits /= 7;
                text.push_str(pieces[(bits % pieces.len() as u64) as usize]);
                bits /= pieces.len() as u64;
            }
            let _ = stored(&text);
            let _ = stored_number(&text);
        }
    }
}
