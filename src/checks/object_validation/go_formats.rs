//! The `uri` and `email` formats as kube-openapi's `strfmt` registry checks them: Go's
//! `net/url.ParseRequestURI` must read the string (`govalidator.IsRequestURI`), and Go's
//! `net/mail.ParseAddress` must read one address (`strfmt.IsEmail`).
//!
//! Written by hand: no crate reads a URL or an address as Go does (the `url` crate follows the
//! WHATWG standard, which percent-encodes what Go accepts as it stands and refuses what Go reads
//! as an opaque URL; the address crates follow RFC 5322 or HTML, not Go's permissive reading of
//! dots, comments, groups and RFC 2047 words). Only whether Go accepts the string is
//! reproduced, not what it reads.
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
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
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

/// Whether Go's `mail.ParseAddress` reads `address` as one address (`parseSingleAddress`): an
/// addr-spec, a display name and an angle-addr, or a group of one address, with comments.
/// Domain literals (`[192.0.2.1]`) are read as Go 1.23 and later read them (older releases
/// refuse them: accepting them is never a false refusal).
pub fn is_email(address: &str) -> bool {
    let mut p = Mail { s: address.as_bytes() };
    matches!(p.address(true), Ok(1)) && p.skip_cfws() && p.s.is_empty()
}

/// What Go's `addrParser` has left to read.
struct Mail<'a> {
    s: &'a [u8],
}

/// Go's `utf8.DecodeRuneInString`: the character (none when the bytes are not UTF-8) and its
/// length; `None` at the end.
fn rune(s: &[u8]) -> Option<(Option<char>, usize)> {
    let first = *s.first()?;
    let width = match first {
        0..=0x7f => return Some((Some(first as char), 1)),
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return Some((None, 1)),
    };
    match s.get(..width).map(std::str::from_utf8) {
        Some(Ok(text)) => Some((text.chars().next(), width)),
        _ => Some((None, 1)),
    }
}

/// `isVchar`: a visible ASCII character, or any non-ASCII one.
fn vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || !c.is_ascii()
}

/// `isAtext`: what an atom holds (a dot only in a dot-atom).
fn atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => vchar(c),
    }
}

/// `isWSP`.
fn wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

impl Mail<'_> {
    /// `parseAddress`: how many addresses it read (a group may hold none or several).
    fn address(&mut self, group: bool) -> Result<usize, ()> {
        self.skip_space();
        if self.s.is_empty() {
            return Err(());
        }
        // An addr-spec first, then a display name and an angle-addr.
        if self.addr_spec().is_ok() {
            self.skip_space();
            if self.s.first() == Some(&b'(') {
                self.display_name_comment()?;
            }
            return Ok(1);
        }
        if self.s.first() != Some(&b'<') {
            self.phrase()?;
        }
        self.skip_space();
        if group && self.consume(b':') {
            return self.group_list();
        }
        if !self.consume(b'<') {
            return Err(());
        }
        self.addr_spec()?;
        if self.consume(b'>') { Ok(1) } else { Err(()) }
    }

    /// `consumeGroupList`, after the `:`.
    fn group_list(&mut self) -> Result<usize, ()> {
        self.skip_space();
        if self.consume(b';') {
            return if self.skip_cfws() { Ok(0) } else { Err(()) };
        }
        let mut count = 0;
        loop {
            self.skip_space();
            count += self.address(false)?;
            if !self.skip_cfws() {
                return Err(());
            }
            if self.consume(b';') {
                return if self.skip_cfws() { Ok(count) } else { Err(()) };
            }
            if !self.consume(b',') {
                return Err(());
            }
        }
    }

    /// `consumeAddrSpec`: `local@domain`; on an error nothing is consumed.
    fn addr_spec(&mut self) -> Result<(), ()> {
        let orig = self.s;
        let read = self.local_at_domain();
        if read.is_err() {
            self.s = orig;
        }
        read
    }

    /// The reading of [`Mail::addr_spec`], which may leave a part consumed on an error.
    fn local_at_domain(&mut self) -> Result<(), ()> {
        self.skip_space();
        match self.s.first() {
            None => return Err(()),
            Some(b'"') => {
                if !self.quoted_string()? {
                    return Err(());
                }
            }
            Some(_) => self.atom(true, false)?,
        }
        if !self.consume(b'@') {
            return Err(());
        }
        self.skip_space();
        match self.s.first() {
            None => Err(()),
            Some(b'[') => self.domain_literal(),
            Some(_) => self.atom(true, false),
        }
    }

    /// `consumePhrase`: one word at least (an atom, a quoted string or RFC 2047 words).
    fn phrase(&mut self) -> Result<(), ()> {
        let (mut words, mut encoded, mut failed) = (0, 0, false);
        loop {
            if words > 0 && !self.skip_cfws() {
                return Err(());
            }
            self.skip_space();
            let Some(&first) = self.s.first() else {
                break;
            };
            let word = if first == b'"' {
                self.quoted_string().map(|_| None)
            } else {
                let start = self.s;
                self.atom(true, true).and_then(|()| {
                    let atom = &start[..start.len() - self.s.len()];
                    rfc2047_word(atom)
                })
            };
            match word {
                Err(()) => {
                    failed = true;
                    break;
                }
                // An encoded word joins the ones before it.
                Ok(Some(length)) => encoded += length,
                Ok(None) if encoded > 0 => {
                    words += 2;
                    encoded = 0;
                }
                Ok(None) => words += 1,
            }
        }
        if encoded > 0 {
            words += 1;
        }
        if failed && words == 0 { Err(()) } else { Ok(()) }
    }

    /// `consumeQuotedString`: whether it holds anything.
    fn quoted_string(&mut self) -> Result<bool, ()> {
        let mut i = 1;
        let (mut escaped, mut held) = (false, false);
        loop {
            let (c, size) = rune(&self.s[i..]).ok_or(())?;
            let c = c.ok_or(())?;
            if escaped {
                if !vchar(c) && !wsp(c) {
                    return Err(());
                }
                escaped = false;
                held = true;
            } else if (vchar(c) && c != '\\' && c != '"') || wsp(c) {
                held = true;
            } else if c == '"' {
                break;
            } else if c == '\\' {
                escaped = true;
            } else {
                return Err(());
            }
            i += size;
        }
        self.s = &self.s[i + 1..];
        Ok(held)
    }

    /// `consumeAtom`: a dot-atom when `dot`; `permissive` lets dots lead, trail and double.
    fn atom(&mut self, dot: bool, permissive: bool) -> Result<(), ()> {
        let mut i = 0;
        while let Some((c, size)) = rune(&self.s[i..]) {
            let c = c.ok_or(())?;
            if !atext(c, dot) {
                break;
            }
            i += size;
        }
        let atom = &self.s[..i];
        if i == 0
            || !permissive && (atom.starts_with(b".") || atom.ends_with(b".") || atom.windows(2).any(|w| w == b".."))
        {
            return Err(());
        }
        self.s = &self.s[i..];
        Ok(())
    }

    /// `consumeDomainLiteral`: `[` an IPv4 address, or `IPv6:` and an IP address, `]`.
    fn domain_literal(&mut self) -> Result<(), ()> {
        self.consume(b'[');
        let mut length = 0;
        loop {
            let (c, size) = rune(&self.s[length..]).ok_or(())?;
            match c.ok_or(())? {
                ']' => break,
                '[' | '\\' => return Err(()),
                c if vchar(c) => length += size,
                _ => return Err(()),
            }
        }
        let text = std::str::from_utf8(&self.s[..length]).map_err(|_| ())?;
        self.s = &self.s[length + 1..];
        // Go's `net.ParseIP`: 16 bytes for any address; `To4` for an IPv4 or IPv4-mapped one.
        let ip = |t: &str| t.parse::<std::net::IpAddr>().ok();
        let valid = match text.strip_prefix("IPv6:") {
            Some(address) => ip(address).is_some(),
            None => match ip(text) {
                Some(std::net::IpAddr::V4(_)) => true,
                Some(std::net::IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_some(),
                None => false,
            },
        };
        if valid { Ok(()) } else { Err(()) }
    }

    /// `consumeDisplayNameComment`: a comment after an addr-spec, its RFC 2047 words decoded.
    fn display_name_comment(&mut self) -> Result<(), ()> {
        if !self.consume(b'(') {
            return Err(());
        }
        let mut comment = Vec::new();
        if !self.comment(Some(&mut comment)) {
            return Err(());
        }
        for word in comment.split(|b| *b == b' ' || *b == b'\t').filter(|w| !w.is_empty()) {
            rfc2047_word(word)?;
        }
        Ok(())
    }

    /// `consumeComment`, after its `(`: whether its parentheses close; its text (a backslash
    /// dropped before the byte it escapes, the last `)` left out) into `text`.
    fn comment(&mut self, mut text: Option<&mut Vec<u8>>) -> bool {
        let mut depth = 1;
        while depth > 0 && !self.s.is_empty() {
            match self.s[0] {
                b'\\' if self.s.len() > 1 => self.s = &self.s[1..],
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
            if depth > 0
                && let Some(text) = text.as_deref_mut()
            {
                text.push(self.s[0]);
            }
            self.s = &self.s[1..];
        }
        depth == 0
    }

    fn consume(&mut self, b: u8) -> bool {
        if self.s.first() == Some(&b) {
            self.s = &self.s[1..];
            true
        } else {
            false
        }
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t') = self.s.first() {
            self.s = &self.s[1..];
        }
    }

    /// `skipCFWS`: spaces and comments; false when a comment does not close.
    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if !self.comment(None) {
                return false;
            }
            self.skip_space();
        }
        true
    }
}

/// `decodeRFC2047Word`: `Some(length)` of what an encoded word (`=?utf-8?q?...?=`) decodes to,
/// `None` for a word that is not one (or does not decode: Go reads it as it stands), and an
/// error for a charset Go does not know (only `utf-8`, `iso-8859-1` and `us-ascii`).
fn rfc2047_word(word: &[u8]) -> Result<Option<usize>, ()> {
    let Ok(word) = std::str::from_utf8(word) else {
        return Ok(None);
    };
    let Some(inner) = word
        .strip_prefix("=?")
        .and_then(|w| w.strip_suffix("?="))
        .filter(|_| word.len() >= 8 && word.matches('?').count() == 4)
    else {
        return Ok(None);
    };
    let (charset, rest) = inner.split_once('?').unwrap_or((inner, ""));
    let (encoding, text) = rest.split_once('?').unwrap_or((rest, ""));
    if charset.is_empty() || encoding.len() != 1 {
        return Ok(None);
    }
    let length = match encoding {
        "B" | "b" => super::validate::is_go_base64(text).then_some(text.len()),
        "Q" | "q" => q_decoded_length(text),
        _ => None,
    };
    let Some(length) = length else {
        return Ok(None);
    };
    // Go compares with `strings.EqualFold`, which folds a few non-ASCII letters to ASCII ones
    // (`ſ` to `s`): a charset with such a letter is taken as known, never refused.
    let known = ["utf-8", "iso-8859-1", "us-ascii"]
        .iter()
        .any(|k| charset.eq_ignore_ascii_case(k))
        || !charset.is_ascii();
    if known { Ok(Some(length)) } else { Err(()) }
}

/// The length of what mime's `qDecode` decodes `text` to, `None` when it refuses it.
fn q_decoded_length(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < bytes.len() {
        match bytes[i] {
            b'=' => {
                let hex = |j: usize| bytes.get(j).filter(|b| b.is_ascii_hexdigit());
                hex(i + 1)?;
                hex(i + 2)?;
                i += 2;
            }
            b'_' | b' '..=b'~' | b'\n' | b'\r' | b'\t' => {}
            _ => return None,
        }
        i += 1;
        n += 1;
    }
    Some(n)
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

    #[test]
    fn emails_as_go_reads_them() {
        // kube-openapi's `TestFormatEmail` addresses, then edge cases of Go's `addrParser`, each
        // with Go 1.27's `mail.ParseAddress` answer (`strfmt.IsEmail`: no error, an address).
        for (address, valid) in [
            ("blah@gmail.com", true),
            ("test@d.verylongtoplevel", true),
            ("email+tag@gmail.com", true),
            ("\" \"@example.com", true),
            ("\"Abc\\@def\"@example.com", true),
            ("\"Fred Bloggs\"@example.com", true),
            ("\"Joe\\\\Blow\"@example.com", true),
            ("\"Abc@def\"@example.com", true),
            ("customer/department=shipping@example.com", true),
            ("$A12345@example.com", true),
            ("!def!xyz%abc@example.com", true),
            ("_somename@example.com", true),
            ("!#$%&'*+-/=?^_`{}|~@example.com", true),
            ("Miles.O'Brian@example.com", true),
            ("postmaster@☁→❄→☃→☀→☺→☂→☹→✝.ws", true),
            ("root@localhost", true),
            ("john@com", true),
            ("api@piston.ninja", true),
            ("somebody@somewhere@com", false),
            ("Gogh Fir <gf@example.com>", true),
            ("<gf@example.com>", true),
            ("gf@example.com (Gogh Fir)", true),
            ("gf@example.com (unclosed", false),
            ("  gf@example.com  ", true),
            ("group: gf@example.com;", true),
            ("group: a@b.c, d@e.f;", false),
            ("group:;", false),
            ("\"\"@example.com", false),
            (".dot@example.com", false),
            ("dot.@example.com", false),
            ("do..t@example.com", false),
            ("Dot. Name <a@b.c>", true),
            ("a@[192.0.2.1]", true),
            ("a@[IPv6:2001:db8::1]", true),
            ("a@[2001:db8::1]", false),
            ("a@[::ffff:192.0.2.1]", true),
            ("a@[192.0.2.256]", false),
            ("=?utf-8?q?J=C3=B6rg?= <a@b.c>", true),
            ("=?x-unknown?q?J?= <a@b.c>", false),
            ("Name =?x-unknown?q?J?= <a@b.c>", true),
            ("a@b.c (=?x-unknown?q?J?=)", false),
            ("a@b.c (=?utf-8?q?J?=)", true),
            ("a@b.c (x\\ =?x-unknown?q?J?=)", false),
            ("=?utf-8?b?SsO2cmc=?= <a@b.c>", true),
            ("=?x-unknown?b?not base64?= <a@b.c>", true),
            ("foo.bar", false),
            ("Full Name", false),
            ("a@b.c>", false),
            ("<a@b.c", false),
            ("", false),
            ("   ", false),
            ("a @ b.c", false),
            ("a@ b.c", true),
            ("a@b .c", false),
            ("a@b.c,d@e.f", false),
            ("Name <a@b.c> (comment)", true),
            ("(comment) a@b.c", false),
            ("\"quoted\\", false),
            ("a\\b@c.d", false),
            ("é@ü.de", true),
            ("Joe \"Q\" Public <a@b.c>", true),
            ("a@b.c (nested (comment))", true),
            ("=?utf-8?q??= =?x?q?a?= <a@b.c>", false),
        ] {
            assert_eq!(is_email(address), valid, "{address}");
        }
    }
}
