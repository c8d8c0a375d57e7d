//! Kubernetes' quantity library (`library/quantity.go`, Kubernetes 1.28): `quantity()`,
//! `isQuantity()` and the methods of a quantity, with quantities read as apimachinery's
//! `resource.ParseQuantity` reads them (`pkg/api/resource/quantity.go`): a decimal number and a
//! suffix (`Ki`..`Ei`, `n`..`E`, or an exponent `e3`), rounded up to nanos, binary amounts capped
//! at 2^63-1.
//!
//! By hand: the quantity grammar is Kubernetes'; an exact decimal (`i128` mantissa and a
//! power of ten) holds every quantity a manifest writes, and a number past 38 digits is refused
//! as unparsable (apimachinery reads it into a big decimal).

use super::library::{error, string_arg};
use cel::objects::Opaque;
use cel::{ExecutionError, Value};
use std::cmp::Ordering;
use std::sync::Arc;

/// The CEL type name of a quantity.
pub const TYPE: &str = "kubernetes.Quantity";

/// apimachinery's error for text that is not a quantity.
const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// apimachinery's error for a number it cannot read.
const NUMERIC: &str = "unable to parse numeric part of quantity";
/// apimachinery's error for a suffix it does not know.
const SUFFIX: &str = "unable to parse quantity's suffix";

/// A quantity: `mantissa * 10^exponent`, exactly.
#[derive(Debug, Clone, Copy)]
pub struct Quantity {
    mantissa: i128,
    exponent: i32,
}

impl PartialEq for Quantity {
    fn eq(&self, other: &Quantity) -> bool {
        self.compare(other) == Ordering::Equal
    }
}

impl Eq for Quantity {}

impl Opaque for Quantity {
    fn runtime_type_name(&self) -> &str {
        TYPE
    }
}

impl Quantity {
    /// Without trailing zeros in the mantissa.
    fn normal(self) -> Quantity {
        let Quantity {
            mut mantissa,
            mut exponent,
        } = self;
        if mantissa == 0 {
            return Quantity {
                mantissa: 0,
                exponent: 0,
            };
        }
        while mantissa % 10 == 0 {
            mantissa /= 10;
            exponent += 1;
        }
        Quantity { mantissa, exponent }
    }

    /// The ordering of two quantities by value.
    pub fn compare(&self, other: &Quantity) -> Ordering {
        let (a, b) = (self.normal(), other.normal());
        let sign = a.mantissa.signum().cmp(&b.mantissa.signum());
        if sign != Ordering::Equal || a.mantissa == 0 {
            return sign;
        }
        // Same sign: compare magnitudes by their leading digit's power of ten, then digits.
        let digits = |m: i128| m.unsigned_abs().ilog10() as i64 + 1;
        let (ma, mb) = (
            a.exponent as i64 + digits(a.mantissa),
            b.exponent as i64 + digits(b.mantissa),
        );
        let magnitude = if ma != mb {
            ma.cmp(&mb)
        } else {
            let (da, db) = (digits(a.mantissa), digits(b.mantissa));
            let (mut x, mut y) = (a.mantissa.unsigned_abs(), b.mantissa.unsigned_abs());
            // Both have at most 39 digits; pad the shorter (same leading power, so it fits).
            if da < db {
                x *= 10u128.pow((db - da) as u32);
            } else {
                y *= 10u128.pow((da - db) as u32);
            }
            x.cmp(&y)
        };
        if a.mantissa < 0 { magnitude.reverse() } else { magnitude }
    }

    /// The quantity as an `i64`, when it is an integer that fits.
    fn as_i64(self) -> Option<i64> {
        let q = self.normal();
        if q.exponent < 0 {
            return None;
        }
        let scaled = q.mantissa.checked_mul(10i128.checked_pow(q.exponent as u32)?)?;
        i64::try_from(scaled).ok()
    }

    /// The quantity as the nearest `f64`.
    fn as_f64(self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exponent)
    }

    /// The sum of two quantities.
    fn add(self, other: Quantity) -> Option<Quantity> {
        let (a, b) = (self.normal(), other.normal());
        let exponent = a.exponent.min(b.exponent);
        let scale = |q: Quantity| {
            q.mantissa
                .checked_mul(10i128.checked_pow((q.exponent - exponent) as u32)?)
        };
        Some(Quantity {
            mantissa: scale(a)?.checked_add(scale(b)?)?,
            exponent,
        })
    }
}

/// Reads a quantity as `resource.ParseQuantity` does.
pub fn parse(text: &str) -> Result<Quantity, &'static str> {
    if text.is_empty() {
        return Err(FORMAT_WRONG);
    }
    let bytes = text.as_bytes();
    let mut pos = 0;
    let negative = match bytes[0] {
        b'-' => {
            pos = 1;
            true
        }
        b'+' => {
            pos = 1;
            false
        }
        _ => false,
    };
    let digits_from = |from: usize| from + bytes[from..].iter().take_while(|b| b.is_ascii_digit()).count();
    let num_end = digits_from(pos);
    let num = &text[pos..num_end];
    pos = num_end;
    let mut denom = "";
    if bytes.get(pos) == Some(&b'.') {
        let end = digits_from(pos + 1);
        denom = &text[pos + 1..end];
        pos = end;
    }
    let suffix_start = pos;
    pos += bytes[pos..].iter().take_while(|b| b"eEinumkKMGTP".contains(b)).count();
    if matches!(bytes.get(pos), Some(b'-' | b'+')) {
        pos += 1;
    }
    pos = digits_from(pos);
    if pos != bytes.len() {
        return Err(FORMAT_WRONG);
    }
    let suffix = &text[suffix_start..];
    let (binary, shift) = match suffix {
        "Ki" => (true, 10),
        "Mi" => (true, 20),
        "Gi" => (true, 30),
        "Ti" => (true, 40),
        "Pi" => (true, 50),
        "Ei" => (true, 60),
        "n" => (false, -9),
        "u" => (false, -6),
        "m" => (false, -3),
        "" => (false, 0),
        "k" => (false, 3),
        "M" => (false, 6),
        "G" => (false, 9),
        "T" => (false, 12),
        "P" => (false, 15),
        "E" => (false, 18),
        s if s.starts_with(['e', 'E']) => match s[1..].parse::<i32>() {
            Ok(e) => (false, e),
            _ => return Err(SUFFIX),
        },
        _ => return Err(SUFFIX),
    };
    let digits = format!("{num}{denom}");
    let significant = digits.trim_start_matches('0');
    if significant.len() > 38 {
        return Err(NUMERIC);
    }
    let mut mantissa: i128 = if significant.is_empty() {
        0
    } else {
        significant.parse().map_err(|_| NUMERIC)?
    };
    let mut exponent = -(denom.len() as i32);
    if binary {
        let capped = Quantity {
            mantissa: i64::MAX as i128,
            exponent: 0,
        };
        mantissa = match mantissa.checked_mul(1i128 << shift) {
            Some(m) => m,
            None => return Ok(if negative { negate(capped) } else { capped }),
        };
        let q = Quantity { mantissa, exponent }.normal();
        let q = round_to_nanos(q);
        let q = if q.compare(&capped) == Ordering::Greater {
            capped
        } else {
            q
        };
        return Ok(if negative { negate(q) } else { q });
    }
    exponent = exponent.checked_add(shift).ok_or(NUMERIC)?;
    let q = round_to_nanos(Quantity { mantissa, exponent }.normal());
    Ok(if negative { negate(q) } else { q })
}

/// The quantity with the other sign.
fn negate(q: Quantity) -> Quantity {
    Quantity {
        mantissa: -q.mantissa,
        exponent: q.exponent,
    }
}

/// Rounded up (away from zero) to a multiple of 10^-9, as apimachinery rounds.
fn round_to_nanos(q: Quantity) -> Quantity {
    if q.exponent >= -9 {
        return q;
    }
    let drop = (-9 - q.exponent) as u32;
    let Some(divisor) = 10i128.checked_pow(drop) else {
        return Quantity {
            mantissa: q.mantissa.signum(),
            exponent: -9,
        };
    };
    let (quotient, rest) = (q.mantissa / divisor, q.mantissa % divisor);
    Quantity {
        mantissa: quotient + rest.signum(),
        exponent: -9,
    }
    .normal()
}

/// The quantity an argument holds.
fn arg(args: &[Value], index: usize, function: &str) -> Result<Quantity, ExecutionError> {
    match args.get(index) {
        Some(Value::Opaque(o)) => o
            .downcast_ref::<Quantity>()
            .copied()
            .ok_or_else(|| ExecutionError::no_such_overload(function, Vec::new())),
        _ => Err(ExecutionError::no_such_overload(function, Vec::new())),
    }
}

/// A quantity as a value.
fn value(q: Quantity) -> Value {
    Value::Opaque(Arc::new(q))
}

/// `quantity(string)`.
pub fn quantity(args: &[Value]) -> Result<Value, ExecutionError> {
    parse(string_arg(args, 0, "quantity")?)
        .map(value)
        .map_err(|e| error("quantity", e))
}

/// `isQuantity(string)`.
pub fn is_quantity(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(parse(string_arg(args, 0, "isQuantity")?).is_ok()))
}

/// `q.sign()`.
pub fn sign(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(arg(args, 0, "sign")?.mantissa.signum() as i64))
}

/// `q.isGreaterThan(other)`.
pub fn is_greater_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(
        arg(args, 0, "isGreaterThan")?.compare(&arg(args, 1, "isGreaterThan")?) == Ordering::Greater,
    ))
}

/// `q.isLessThan(other)`.
pub fn is_less_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(
        arg(args, 0, "isLessThan")?.compare(&arg(args, 1, "isLessThan")?) == Ordering::Less,
    ))
}

/// `q.compareTo(other)`: -1, 0 or 1.
pub fn compare_to(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(
        match arg(args, 0, "compareTo")?.compare(&arg(args, 1, "compareTo")?) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        },
    ))
}

/// `q.asApproximateFloat()`.
pub fn as_approximate_float(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Float(arg(args, 0, "asApproximateFloat")?.as_f64()))
}

/// `q.asInteger()`.
pub fn as_integer(args: &[Value]) -> Result<Value, ExecutionError> {
    arg(args, 0, "asInteger")?
        .as_i64()
        .map(Value::Int)
        .ok_or_else(|| error("asInteger", "cannot convert value to integer"))
}

/// `q.isInteger()`.
pub fn is_integer(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(arg(args, 0, "isInteger")?.as_i64().is_some()))
}

/// The other operand of `add` and `sub`: a quantity or an `int`.
fn operand(args: &[Value], function: &str) -> Result<Quantity, ExecutionError> {
    match args.get(1) {
        Some(Value::Int(i)) => Ok(Quantity {
            mantissa: *i as i128,
            exponent: 0,
        }),
        _ => arg(args, 1, function),
    }
}

/// `q.add(other)`.
pub fn add(args: &[Value]) -> Result<Value, ExecutionError> {
    let sum = arg(args, 0, "add")?.add(operand(args, "add")?);
    sum.map(value).ok_or_else(|| error("add", "integer overflow"))
}

/// `q.sub(other)`.
pub fn sub(args: &[Value]) -> Result<Value, ExecutionError> {
    let difference = arg(args, 0, "sub")?.add(negate(operand(args, "sub")?));
    difference.map(value).ok_or_else(|| error("sub", "integer overflow"))
}
