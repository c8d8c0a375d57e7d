//! The `uri` format as kube-openapi's `strfmt` registry checks it: Go's
//! `net/url.ParseRequestURI` must read the string (`govalidator.IsRequestURI`).
//!
//! Written by hand: no crate reads a URL as Go does (the `url` crate follows the WHATWG
//! standard, which percent-encodes what Go accepts as it stands and refuses what Go reads as an
//! opaque URL). Only whether Go accepts the string is reproduced, not what it reads.
//!
//! Go's reading changed between releases: from Go 1.26 it also refuses a bracketed host that is
//! not an IPv6 address, a `[` elsewhere in a host, and more than one colon in an `http` or
//! `https` host. The Kubernetes versions this check knows (1.24 to 1.35) were built with Go 1.25
//! or older, and every string a later Go accepts an older one accepts too, so this follows the
//! older, wider rules: never a refusal the API server would not give.

/// Whether Go's `url.ParseRequestURI` accepts `raw` (`net/url`'s `parse` with `viaRequest`).
pub fn is_request_uri(raw: &str) -> bool {
    if raw.is_empty() || raw.bytes().any(|b| b < b' ' || b == 0x7f) {
        return false;
    }
    if raw == "*" {
        return true;
    }
    let Some((scheme, rest)) = scheme(raw) else {
        // `missing protocol scheme`: a colon first.
        return false;
    };
    // The query is kept as written, never unescaped; a fragment is not split off.
    let rest = rest.split_once('?').map_or(rest, |(before, _)| before);
    if !rest.starts_with('/') {
        // With a scheme, an opaque URL (`mailto:someone`); without, no URI a request carries.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, rest) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !authority_ok(authority) {
            return false;
        }
        path = rest;
    }
    unescapes(path, Mode::Path)
}

/// `getScheme`: the scheme and the rest, the scheme empty when there is none; `None` for a
/// colon first.
fn scheme(raw: &str) -> Option<(&str, &str)> {
    for (i, b) in raw.bytes().enumerate() {
        match b {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&raw[..i], &raw[i + 1..])),
            _ => return Some(("", raw)),
        }
    }
    Some(("", raw))
}

/// `parseAuthority`: `[userinfo@]host[:port]`, split at the last `@`.
fn authority_ok(authority: &str) -> bool {
    match authority.rfind('@') {
        None => host_ok(authority),
        Some(i) => {
            let (userinfo, host) = (&authority[..i], &authority[i + 1..]);
            host_ok(host) && userinfo.chars().all(userinfo_char) && unescapes(userinfo, Mode::UserPassword)
        }
    }
}

/// `validUserinfo`: the characters userinfo may hold as written.
fn userinfo_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c)
}

/// `parseHost` (Go 1.25): a bracketed IP literal with an optional port, or a host whose part
/// after the last colon is a port.
fn host_ok(host: &str) -> bool {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return false;
        };
        if !port_ok(&host[close + 1..]) {
            return false;
        }
        // RFC 6874: `%25` starts a zone, which may escape what a host name may hold.
        if let Some(zone) = host[..close].find("%25") {
            return unescapes(&host[..zone], Mode::Host)
                && unescapes(&host[zone..close], Mode::Zone)
                && unescapes(&host[close..], Mode::Host);
        }
    } else if let Some(i) = host.rfind(':')
        && !port_ok(&host[i..])
    {
        return false;
    }
    unescapes(host, Mode::Host)
}

/// `validOptionalPort`: empty, or a colon and digits.
fn port_ok(port: &str) -> bool {
    port.is_empty() || port.strip_prefix(':').is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// The parts of a URL `unescape` reads differently.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
}

/// Whether a host (or zone) may hold the ASCII byte `b` as written (`shouldEscape` is false).
fn host_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.~!$&'()*+,;=:[]<>\"".contains(&b)
}

/// Whether Go's `unescape` reads `s` in `mode` without an error: every `%` followed by two hex
/// digits; in a host, only non-ASCII bytes (and `%25`) escaped and every ASCII byte one a host
/// may hold; in a zone, escapes of what a host may hold (or a space).
fn unescapes(s: &str, mode: Mode) -> bool {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            let hex = |j: usize| bytes.get(j).and_then(|c| (*c as char).to_digit(16));
            let (Some(high), Some(low)) = (hex(i + 1), hex(i + 2)) else {
                return false;
            };
            let percent = high == 2 && low == 5;
            if mode == Mode::Host && high < 8 && !percent {
                return false;
            }
            let value = (high * 16 + low) as u8;
            if mode == Mode::Zone && !percent && value != b' ' && !host_byte(value) {
                return false;
            }
            i += 3;
        } else {
            if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && !host_byte(b) {
                return false;
            }
            i += 1;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_as_go_reads_them() {
        // Each checked against Go 1.27's `url.ParseRequestURI` (with `GODEBUG=urlstrictcolons=0`,
        // Go 1.25's reading of colons), and kube-openapi's own test (`somewhere.com` refused).
        for accepted in [
            "http://somewhere.com",
            "https://user:p@ss@example.com:8443/a/b?q=1#frag",
            "mailto:someone@example.com",
            "urn:isbn:0451450523",
            "*",
            "/just/a/path",
            "//not-a-host/path",
            "http:/path",
            "http://",
            "http://[fe80::1%25en0]:80/",
            "http://[::1]/",
            "http://example.com/a b",
            "http://example.com/%41",
            "http://bücher.example/",
            "http://h:/",
            "http://a:1:2/",
            "s3://bucket/key",
            "git+ssh://git@github.com/x.git",
            "http://example.com?x",
            "http://user%20x@example.com/",
            "http://[fe80::1%25%20x]/",
            "http://ex%C3%A9.com/",
            "HTTP://X",
        ] {
            assert!(is_request_uri(accepted), "{accepted}");
        }
        for refused in [
            "",
            "somewhere.com",
            "relative/path",
            ":no-scheme",
            "?q",
            "http://example.com:port/",
            "http://exa mple.com/%zz",
            "http://example.com/%4",
            "http://ex%41mple.com/",
            "http://example.com#frag",
            "http://[fe80::1/",
            "http://[::1]x/",
            "http://us^er@example.com/",
            "http://ex{ample.com/",
            "http://example.com/\n",
            "http://example.com/\x7f",
            "http://[fe80::1%25%C3%A9]/",
            "http://a b/",
            "1http://x",
            "ht%tp://x",
        ] {
            assert!(!is_request_uri(refused), "{refused}");
        }
    }
}
