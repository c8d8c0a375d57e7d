//! Kubernetes' semver library (`library/semverlib.go`, Kubernetes 1.33): `semver()`,
//! `isSemver()` (each optionally normalising `v1.2` to `1.2.0`) and the methods of a version.
//! Versions are read as blang/semver v4's `Parse` reads them, with its error texts; by hand
//! because the `semver` crate words its errors otherwise and orders build metadata, which
//! blang ignores.

use super::library::{error, string_arg};
use cel::objects::Opaque;
use cel::{ExecutionError, Value};
use std::cmp::Ordering;
use std::sync::Arc;

/// The CEL type name of a version.
pub const TYPE: &str = "kubernetes.Semver";

/// A prerelease identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Pre {
    /// Digits only.
    Number(u64),
    /// Anything else.
    Text(String),
}

/// A version: major, minor, patch and prerelease (build metadata does not order).
#[derive(Debug, Clone)]
pub struct Version {
    core: [u64; 3],
    pre: Vec<Pre>,
}

impl PartialEq for Version {
    fn eq(&self, other: &Version) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Version {}

impl Opaque for Version {
    fn runtime_type_name(&self) -> &str {
        TYPE
    }
}

impl Version {
    /// blang's `Compare`.
    fn compare(&self, other: &Version) -> Ordering {
        self.core
            .cmp(&other.core)
            .then_with(|| match (self.pre.is_empty(), other.pre.is_empty()) {
                (true, true) => Ordering::Equal,
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                (false, false) => {
                    for (a, b) in self.pre.iter().zip(&other.pre) {
                        let order = match (a, b) {
                            (Pre::Number(x), Pre::Number(y)) => x.cmp(y),
                            (Pre::Number(_), Pre::Text(_)) => Ordering::Less,
                            (Pre::Text(_), Pre::Number(_)) => Ordering::Greater,
                            (Pre::Text(x), Pre::Text(y)) => x.cmp(y),
                        };
                        if order != Ordering::Equal {
                            return order;
                        }
                    }
                    self.pre.len().cmp(&other.pre.len())
                }
            })
    }
}

/// Only ASCII digits (blang's `containsOnly(s, numbers)`; true for an empty string).
fn digits(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit())
}

/// Go's `strconv.ParseUint(s, 10, 64)`.
fn parse_uint(s: &str) -> Result<u64, String> {
    s.parse().map_err(|_| {
        let reason = if s.is_empty() {
            "invalid syntax"
        } else {
            "value out of range"
        };
        format!("strconv.ParseUint: parsing {}: {reason}", crate::text::quote(s))
    })
}

/// A number part: digits without a leading zero.
fn number(s: &str, name: &str) -> Result<u64, String> {
    if !digits(s) {
        return Err(format!(
            "Invalid character(s) found in {} number {}",
            name.to_lowercase(),
            crate::text::quote(s)
        ));
    }
    if s.len() > 1 && s.starts_with('0') {
        return Err(format!(
            "{name} number must not contain leading zeroes {}",
            crate::text::quote(s)
        ));
    }
    parse_uint(s)
}

/// blang's `Parse`.
pub fn parse(s: &str) -> Result<Version, String> {
    if s.is_empty() {
        return Err("Version string empty".to_owned());
    }
    let parts: Vec<&str> = s.splitn(3, '.').collect();
    let [major, minor, rest] = parts[..] else {
        return Err("No Major.Minor.Patch elements found".to_owned());
    };
    let major = number(major, "Major")?;
    let minor = number(minor, "Minor")?;
    let (rest, build) = match rest.split_once('+') {
        Some((before, build)) => (before, Some(build)),
        None => (rest, None),
    };
    let (patch, pre) = match rest.split_once('-') {
        Some((before, pre)) => (before, Some(pre)),
        None => (rest, None),
    };
    let patch = number(patch, "Patch")?;
    let mut version = Version {
        core: [major, minor, patch],
        pre: Vec::new(),
    };
    for part in pre.into_iter().flat_map(|p| p.split('.')) {
        if part.is_empty() {
            return Err("Prerelease is empty".to_owned());
        }
        version.pre.push(if digits(part) {
            if part.len() > 1 && part.starts_with('0') {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    crate::text::quote(part)
                ));
            }
            Pre::Number(parse_uint(part)?)
        } else if part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            Pre::Text(part.to_owned())
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                crate::text::quote(part)
            ));
        });
    }
    for part in build.into_iter().flat_map(|b| b.split('.')) {
        if part.is_empty() {
            return Err("Build meta data is empty".to_owned());
        }
        if !part.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-') {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                crate::text::quote(part)
            ));
        }
    }
    Ok(version)
}

/// The library's `normalizeAndParse`: no `v` prefix, no leading zeros, `.0` for a missing minor
/// or patch.
fn normalize_and_parse(s: &str) -> Result<Version, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s
        .splitn(3, '.')
        .map(|p| {
            if p.len() > 1 {
                let trimmed = p.trim_start_matches('0');
                if trimmed.is_empty() || !trimmed.starts_with(|c: char| c.is_ascii_digit()) {
                    format!("0{trimmed}")
                } else {
                    trimmed.to_owned()
                }
            } else {
                p.to_owned()
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".to_owned());
        }
        parts.resize(3, "0".to_owned());
    }
    parse(&parts.join("."))
}

/// Whether the call asks to normalise (its second argument).
fn normalising(args: &[Value], function: &str) -> Result<bool, ExecutionError> {
    match args.get(1) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ExecutionError::no_such_overload(function, Vec::new())),
    }
}

/// The version an argument holds.
fn arg<'a>(args: &'a [Value], index: usize, function: &str) -> Result<&'a Version, ExecutionError> {
    match args.get(index) {
        Some(Value::Opaque(o)) => o
            .downcast_ref::<Version>()
            .ok_or_else(|| ExecutionError::no_such_overload(function, Vec::new())),
        _ => Err(ExecutionError::no_such_overload(function, Vec::new())),
    }
}

/// `semver(string)` and `semver(string, normalize)`.
pub fn semver(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg(args, 0, "semver")?;
    let parsed = if normalising(args, "semver")? {
        normalize_and_parse(s)
    } else {
        parse(s)
    };
    parsed
        .map(|v| Value::Opaque(Arc::new(v)))
        .map_err(|e| error("semver", e))
}

/// `isSemver(string)` and `isSemver(string, normalize)`.
pub fn is_semver(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg(args, 0, "isSemver")?;
    let parsed = if normalising(args, "isSemver")? {
        normalize_and_parse(s)
    } else {
        parse(s)
    };
    Ok(Value::Bool(parsed.is_ok()))
}

/// A part of the version as an `int` (as the library converts it).
fn part(args: &[Value], function: &str, index: usize) -> Result<Value, ExecutionError> {
    Ok(Value::Int(arg(args, 0, function)?.core[index] as i64))
}

/// `v.major()`.
pub fn major(args: &[Value]) -> Result<Value, ExecutionError> {
    part(args, "major", 0)
}

/// `v.minor()`.
pub fn minor(args: &[Value]) -> Result<Value, ExecutionError> {
    part(args, "minor", 1)
}

/// `v.patch()`.
pub fn patch(args: &[Value]) -> Result<Value, ExecutionError> {
    part(args, "patch", 2)
}

/// The order of the receiver and the argument.
fn order(args: &[Value], function: &str) -> Result<Ordering, ExecutionError> {
    Ok(arg(args, 0, function)?.compare(arg(args, 1, function)?))
}

/// `v.isGreaterThan(other)`.
pub fn is_greater_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(order(args, "isGreaterThan")? == Ordering::Greater))
}

/// `v.isLessThan(other)`.
pub fn is_less_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(order(args, "isLessThan")? == Ordering::Less))
}

/// `v.compareTo(other)`.
pub fn compare_to(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(match order(args, "compareTo")? {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }))
}
