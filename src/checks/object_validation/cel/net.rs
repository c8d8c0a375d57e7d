//! Kubernetes' IP and CIDR libraries (`library/ip.go` and `library/cidr.go`, Kubernetes 1.30):
//! addresses as Go's `netip` reads them (no zone, no IPv4-mapped IPv6), with the library's
//! error texts. By hand over `std::net`: the library's rules (what is refused, what
//! `isGlobalUnicast` means) are Go's.

use super::library::{error, string_arg};
use cel::objects::Opaque;
use cel::{ExecutionError, Value};
use std::net::IpAddr;
use std::sync::Arc;

/// The CEL type name of an IP address.
pub const IP_TYPE: &str = "net.IP";
/// The CEL type name of a CIDR.
pub const CIDR_TYPE: &str = "net.CIDR";

/// An IP address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ip(IpAddr);

impl Opaque for Ip {
    fn runtime_type_name(&self) -> &str {
        IP_TYPE
    }
}

/// A prefix: an address (as written) and a length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    bits: u8,
}

impl Opaque for Cidr {
    fn runtime_type_name(&self) -> &str {
        CIDR_TYPE
    }
}

/// Reads an address as `netip.ParseAddr` and the library accept it.
fn parse_ip(raw: &str) -> Result<IpAddr, String> {
    let parse_error = || {
        format!(
            "IP Address {} parse error during conversion from string: ParseAddr({}): unable to parse IP",
            q(raw),
            q(raw)
        )
    };
    if let Some((addr, _zone)) = raw.split_once('%') {
        return match addr.parse::<std::net::Ipv6Addr>() {
            Ok(_) => Err(format!("IP address {} with zone value is not allowed", q(raw))),
            Err(_) => Err(parse_error()),
        };
    }
    let addr: IpAddr = raw.parse().map_err(|_| parse_error())?;
    if let IpAddr::V6(v6) = addr
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", q(raw)));
    }
    Ok(addr)
}

/// A Go-quoted string.
fn q(s: &str) -> String {
    crate::text::quote(s)
}

/// Reads a prefix as `netip.ParsePrefix` and the library accept it.
fn parse_cidr(raw: &str) -> Result<Cidr, String> {
    let wrap = |reason: &str| {
        format!(
            "network address parse error during conversion from string: netip.ParsePrefix({}): {reason}",
            q(raw)
        )
    };
    let Some((addr, bits)) = raw.rsplit_once('/') else {
        return Err(wrap("no '/'"));
    };
    if addr.contains('%') {
        return Err(wrap("IPv6 zones cannot be present in a prefix"));
    }
    let parsed: IpAddr = addr
        .parse()
        .map_err(|_| wrap(&format!("ParseAddr({}): unable to parse IP", q(addr))))?;
    let max = if parsed.is_ipv4() { 32 } else { 128 };
    let valid_bits =
        !bits.is_empty() && bits.bytes().all(|b| b.is_ascii_digit()) && (bits == "0" || !bits.starts_with('0'));
    let bits: u8 = match bits.parse() {
        Ok(b) if valid_bits && b <= max => b,
        _ => return Err(wrap(&format!("bad bits after slash: {}", q(bits)))),
    };
    if let IpAddr::V6(v6) = parsed
        && v6.to_ipv4_mapped().is_some()
    {
        return Err(format!("IPv4-mapped IPv6 address {} is not allowed", q(raw)));
    }
    Ok(Cidr { addr: parsed, bits })
}

/// The address as a number and its width.
fn as_bits(addr: IpAddr) -> (u128, u8) {
    match addr {
        IpAddr::V4(v4) => (u32::from(v4) as u128, 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    }
}

/// The address from a number of the width of `like`.
fn from_bits(value: u128, like: IpAddr) -> IpAddr {
    match like {
        IpAddr::V4(_) => IpAddr::V4((value as u32).into()),
        IpAddr::V6(_) => IpAddr::V6(value.into()),
    }
}

impl Cidr {
    /// The prefix with its host bits cleared.
    fn masked(self) -> Cidr {
        let (value, width) = as_bits(self.addr);
        let host = width - self.bits;
        let mask = if host >= 128 { 0 } else { !0u128 << host };
        Cidr {
            addr: from_bits(value & mask, self.addr),
            bits: self.bits,
        }
    }

    /// Whether `addr` is in the prefix (`netip.Prefix.Contains`).
    fn contains(self, addr: IpAddr) -> bool {
        if self.addr.is_ipv4() != addr.is_ipv4() {
            return false;
        }
        let masked = self.masked();
        Cidr { addr, bits: self.bits }.masked().addr == masked.addr
    }
}

/// The argument's address.
fn ip_arg(args: &[Value], index: usize, function: &str) -> Result<IpAddr, ExecutionError> {
    match args.get(index) {
        Some(Value::Opaque(o)) => o.downcast_ref::<Ip>().map(|ip| ip.0).ok_or_else(|| no(function)),
        Some(Value::String(s)) => parse_ip(s).map_err(|e| error(function, e)),
        _ => Err(no(function)),
    }
}

/// The argument's prefix.
fn cidr_arg(args: &[Value], index: usize, function: &str) -> Result<Cidr, ExecutionError> {
    match args.get(index) {
        Some(Value::Opaque(o)) => o.downcast_ref::<Cidr>().copied().ok_or_else(|| no(function)),
        Some(Value::String(s)) => parse_cidr(s).map_err(|e| {
            error(
                function,
                format!("network address parse error during conversion from string: {e}"),
            )
        }),
        _ => Err(no(function)),
    }
}

/// No overload.
fn no(function: &str) -> ExecutionError {
    ExecutionError::no_such_overload(function, Vec::new())
}

/// `ip(string)`.
pub fn ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let addr = parse_ip(string_arg(args, 0, "ip")?).map_err(|e| error("ip", e))?;
    Ok(Value::Opaque(Arc::new(Ip(addr))))
}

/// `isIP(string)`.
pub fn is_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse_ip(string_arg(args, 0, "isIP")?).is_ok()))
}

/// `ip.isCanonical(string)`.
pub fn is_canonical(args: &[Value]) -> Result<Value, ExecutionError> {
    let raw = string_arg(args, 0, "ip.isCanonical")?;
    let addr = parse_ip(raw).map_err(|e| error("ip.isCanonical", e))?;
    Ok(Value::Bool(addr.to_string() == raw))
}

/// `ip.family()`.
pub fn family(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(if ip_arg(args, 0, "family")?.is_ipv4() { 4 } else { 6 }))
}

/// `ip.isUnspecified()`.
pub fn is_unspecified(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ip_arg(args, 0, "isUnspecified")?.is_unspecified()))
}

/// `ip.isLoopback()`.
pub fn is_loopback(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ip_arg(args, 0, "isLoopback")?.is_loopback()))
}

/// Go's `IsLinkLocalMulticast`: 224.0.0.0/24, ff02::/16.
fn link_local_multicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..3] == [224, 0, 0],
        IpAddr::V6(v6) => v6.segments()[0] & 0xff0f == 0xff02,
    }
}

/// Go's `IsLinkLocalUnicast`: 169.254.0.0/16, fe80::/10.
fn link_local_unicast(addr: IpAddr) -> bool {
    match addr {
        IpAddr::V4(v4) => v4.octets()[..2] == [169, 254],
        IpAddr::V6(v6) => v6.segments()[0] & 0xffc0 == 0xfe80,
    }
}

/// `ip.isLinkLocalMulticast()`.
pub fn is_link_local_multicast(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(link_local_multicast(ip_arg(
        args,
        0,
        "isLinkLocalMulticast",
    )?)))
}

/// `ip.isLinkLocalUnicast()`.
pub fn is_link_local_unicast(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(link_local_unicast(ip_arg(args, 0, "isLinkLocalUnicast")?)))
}

/// `ip.isGlobalUnicast()`: Go's `IsGlobalUnicast` (private addresses included).
pub fn is_global_unicast(args: &[Value]) -> Result<Value, ExecutionError> {
    let addr = ip_arg(args, 0, "isGlobalUnicast")?;
    let broadcast = matches!(addr, IpAddr::V4(v4) if v4.is_broadcast());
    Ok(Value::Bool(
        !addr.is_unspecified()
            && !broadcast
            && !addr.is_loopback()
            && !addr.is_multicast()
            && !link_local_unicast(addr),
    ))
}

/// `string(ip)`.
pub fn ip_string(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::String(Arc::new(ip_arg(args, 0, "string")?.to_string())))
}

/// `cidr(string)`.
pub fn cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = parse_cidr(string_arg(args, 0, "cidr")?).map_err(|e| {
        error(
            "cidr",
            format!("network address parse error during conversion from string: {e}"),
        )
    })?;
    Ok(Value::Opaque(Arc::new(c)))
}

/// `isCIDR(string)`.
pub fn is_cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse_cidr(string_arg(args, 0, "isCIDR")?).is_ok()))
}

/// `cidr.containsIP(ip or string)`.
pub fn contains_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = cidr_arg(args, 0, "containsIP")?;
    Ok(Value::Bool(c.contains(ip_arg(args, 1, "containsIP")?)))
}

/// `cidr.containsCIDR(cidr or string)`.
pub fn contains_cidr(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = cidr_arg(args, 0, "containsCIDR")?;
    let other = cidr_arg(args, 1, "containsCIDR")?;
    Ok(Value::Bool(c.bits <= other.bits && c.contains(other.addr)))
}

/// `cidr.ip()`.
pub fn cidr_ip(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Opaque(Arc::new(Ip(cidr_arg(args, 0, "ip")?.addr))))
}

/// `cidr.prefixLength()`.
pub fn prefix_length(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(cidr_arg(args, 0, "prefixLength")?.bits as i64))
}

/// `cidr.masked()`.
pub fn masked(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Opaque(Arc::new(cidr_arg(args, 0, "masked")?.masked())))
}

/// `string(cidr)`.
pub fn cidr_string(args: &[Value]) -> Result<Value, ExecutionError> {
    let c = cidr_arg(args, 0, "string")?;
    Ok(Value::String(Arc::new(format!("{}/{}", c.addr, c.bits))))
}
