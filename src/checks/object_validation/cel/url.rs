//! Kubernetes' URL library (`library/urls.go`, every Kubernetes version): `url()`, `isURL()`
//! and the parts of a URL, with URLs read as Go's `net/url` reads them (`ParseRequestURI` to
//! accept one, `Parse` for its parts) and its error texts.
//!
//! By hand: the `url` crate follows the WHATWG standard, which accepts and normalises what
//! Go refuses or keeps (a relative reference, `https://a:b:c/`, a host's case), and carries
//! IDNA tables a policy module does not need.

use super::library::{error, string_arg};
use cel::objects::{Key, Map, Opaque};
use cel::{ExecutionError, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The CEL type name of a URL.
pub const TYPE: &str = "kubernetes.URL";

/// A URL's parts, as Go's `url.URL` holds them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    scheme: String,
    /// `host` or `host:port`, IPv6 in brackets.
    host: String,
    /// The path as written (escaped).
    raw_path: String,
    /// The query as written, without `?`.
    raw_query: String,
}

impl Opaque for Url {
    fn runtime_type_name(&self) -> &str {
        TYPE
    }
}

/// Go's `url.Error` text: `parse "<url>": <reason>`.
fn parse_error(raw: &str, reason: &str) -> String {
    format!("parse {}: {reason}", crate::text::quote(raw))
}

/// Reads a URL as `url.ParseRequestURI` accepts it (an absolute URI or an absolute path) and
/// `url.Parse` splits it.
pub fn parse(raw: &str) -> Result<Url, String> {
    // ParseRequestURI: the whole text, fragment included, must be a request URI.
    parse_with(raw, true).map_err(|reason| parse_error(raw, &reason))?;
    let without_fragment = raw.split_once('#').map_or(raw, |(before, _)| before);
    parse_with(without_fragment, false).map_err(|reason| parse_error(raw, &reason))
}

/// `url.ParseRequestURI`'s answer: its error text for a string it refuses.
pub fn parse_request_uri(raw: &str) -> Result<(), String> {
    parse_with(raw, true)
        .map(drop)
        .map_err(|reason| parse_error(raw, &reason))
}

/// Go's `url.parse`.
fn parse_with(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_owned());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".to_owned());
    }
    let mut url = Url {
        scheme: String::new(),
        host: String::new(),
        raw_path: String::new(),
        raw_query: String::new(),
    };
    if raw == "*" {
        url.raw_path = "*".to_owned();
        return Ok(url);
    }
    let (scheme, mut rest) = split_scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_owned();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // An opaque URL (`mailto:x`): no host, no path.
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".to_owned());
        }
        if let Some(colon) = rest.find(':')
            && !rest[..colon].contains('/')
        {
            return Err("first path segment in URL cannot contain colon".to_owned());
        }
    }
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//") {
        let after = &rest[2..];
        let end = after.find('/').unwrap_or(after.len());
        let authority = &after[..end];
        url.host = host_of(authority)?;
        rest = &after[end..];
    }
    unescape(rest, false)?;
    url.raw_path = rest.to_owned();
    Ok(url)
}

/// Go's `getScheme`: the scheme and the rest.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            '0'..='9' | '+' | '-' | '.' => return Ok(("", raw)),
            ':' if i == 0 => return Err("missing protocol scheme".to_owned()),
            ':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// The host (and port) of an authority, checked as Go's `parseAuthority` and `parseHost` do.
fn host_of(authority: &str) -> Result<String, String> {
    let host = authority.rsplit_once('@').map_or(authority, |(user, host)| {
        let _ = user;
        host
    });
    if let Some(user) = authority.rsplit_once('@').map(|(u, _)| u)
        && user
            .chars()
            .any(|c| !(c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c)))
    {
        return Err("net/url: invalid userinfo".to_owned());
    }
    if let Some(after_bracket) = host.strip_prefix('[') {
        let Some(close) = after_bracket.find(']') else {
            return Err("missing ']' in host".to_owned());
        };
        let port = &after_bracket[close + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", crate::text::quote(port)));
        }
    } else if let Some(colon) = host.rfind(':') {
        let port = &host[colon..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {} after host", crate::text::quote(port)));
        }
    }
    unescape(host, true)
}

/// Go's `validOptionalPort`: empty, or `:` and digits.
fn valid_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Percent-decodes `s` (in a host, only where Go allows it), with Go's error for a bad escape.
fn unescape(s: &str, host: bool) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => out.push(b),
                    None => {
                        let bad = &s[i..(i + 3).min(s.len())];
                        return Err(format!("invalid URL escape {}", crate::text::quote(bad)));
                    }
                }
                i += 3;
            }
            b if host && b < 0x80 && !(b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:[]<>\"".contains(&b)) => {
                return Err(format!(
                    "invalid character {} in host name",
                    crate::text::quote(&(b as char).to_string())
                ));
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Whether Go's `shouldEscape` escapes `b` in a path.
fn path_escapes(b: u8) -> bool {
    !(b.is_ascii_alphanumeric() || b"-_.~$&+,/:;=@".contains(&b))
}

/// `EscapedPath`: the path as written when that is a valid encoding of it, else escaped.
fn escaped_path(raw: &str) -> String {
    let valid = raw.bytes().all(|b| !path_escapes(b) || b"!'()*[]%".contains(&b));
    if valid && unescape(raw, false).is_ok() {
        return raw.to_owned();
    }
    let decoded = unescape(raw, false).unwrap_or_else(|_| raw.to_owned());
    let mut out = String::with_capacity(decoded.len());
    for b in decoded.bytes() {
        if path_escapes(b) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

/// Go's `QueryUnescape`: `+` is a space.
fn query_unescape(s: &str) -> Option<String> {
    unescape(&s.replace('+', " "), false).ok()
}

/// The URL an argument holds.
fn arg<'a>(args: &'a [Value], function: &str) -> Result<&'a Url, ExecutionError> {
    match args.first() {
        Some(Value::Opaque(o)) => o
            .downcast_ref::<Url>()
            .ok_or_else(|| ExecutionError::no_such_overload(function, Vec::new())),
        _ => Err(ExecutionError::no_such_overload(function, Vec::new())),
    }
}

/// A string value.
fn string(s: &str) -> Value {
    Value::String(Arc::new(s.to_owned()))
}

/// `url(string)`.
pub fn url(args: &[Value]) -> Result<Value, ExecutionError> {
    parse(string_arg(args, 0, "url")?)
        .map(|u| Value::Opaque(Arc::new(u)))
        .map_err(|e| error("url", format!("URL parse error during conversion from string: {e}")))
}

/// `isURL(string)`.
pub fn is_url(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse_with(string_arg(args, 0, "isURL")?, true).is_ok()))
}

/// `u.getScheme()`.
pub fn get_scheme(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&arg(args, "getScheme")?.scheme))
}

/// `u.getHost()`.
pub fn get_host(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&arg(args, "getHost")?.host))
}

/// The host without its port (Go's `splitHostPort`).
fn split_host_port(host: &str) -> (&str, &str) {
    let colon = host.rfind(':');
    let (name, port) = match colon {
        Some(i) if valid_optional_port(&host[i..]) && !host[i..].is_empty() => (&host[..i], &host[i + 1..]),
        _ => (host, ""),
    };
    // `[::1]:80` splits at its last colon; `[::1]` has no port.
    let (name, port) = if host.starts_with('[') && !name.ends_with(']') {
        (host, "")
    } else {
        (name, port)
    };
    (
        name.strip_prefix('[').and_then(|n| n.strip_suffix(']')).unwrap_or(name),
        port,
    )
}

/// `u.getHostname()`.
pub fn get_hostname(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(split_host_port(&arg(args, "getHostname")?.host).0))
}

/// `u.getPort()`.
pub fn get_port(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(split_host_port(&arg(args, "getPort")?.host).1))
}

/// `u.getEscapedPath()`.
pub fn get_escaped_path(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&escaped_path(&arg(args, "getEscapedPath")?.raw_path)))
}

/// `u.getQuery()`: every key's values, unescaped, in order.
pub fn get_query(args: &[Value]) -> Result<Value, ExecutionError> {
    let query = &arg(args, "getQuery")?.raw_query;
    let mut values: HashMap<String, Vec<Value>> = HashMap::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if pair.contains(';') {
            continue;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (Some(key), Some(value)) = (query_unescape(key), query_unescape(value)) else {
            continue;
        };
        values.entry(key).or_default().push(string(&value));
    }
    let map = values
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), Value::List(Arc::new(v))))
        .collect();
    Ok(Value::Map(Map { map: Arc::new(map) }))
}
