//! Kubernetes' CEL libraries for CRD rules (`k8s.io/apiserver/pkg/cel/library`), written by
//! hand because no crate has them: they are Kubernetes' additions to CEL, and the `cel` crate
//! has only CEL's own libraries. Each function answers as the Go library does, with its
//! error texts.
//!
//! Every function is registered once in the shared environment, taking and returning the
//! crate's [`Value`]s through [`lift`].

use crate::checks::object_validation::schema::go_regex;
use cel::common::types::{BOOL_TYPE, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE, Type};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError, Value};
use std::cmp::Ordering;
use std::sync::Arc;

/// A library function over plain values.
type Plain = fn(&[Value]) -> Result<Value, ExecutionError>;

/// Wraps a [`Plain`] function as the crate's overload: arguments read as [`Value`]s, the result
/// boxed again.
macro_rules! lift {
    ($f:path) => {{
        fn lifted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
            let values = args
                .iter()
                .map(|a| Value::try_from(a.as_ref()))
                .collect::<Result<Vec<_>, _>>()?;
            let f: Plain = $f;
            let result: Box<dyn cel::common::value::Val> = f(&values)?.try_into()?;
            Ok(CowVal::from(result))
        }
        lifted
    }};
}

/// The Kubernetes minor that introduced a function CRD rules may call, by name, where it
/// is later than 1.24 (`environment/base.go`); a rule compiled for an older minor may not call it.
pub fn introduced(function: &str) -> Option<u32> {
    Some(match function {
        // cel.OptionalTypes and the quantity library.
        "optional.of"
        | "optional.ofNonZeroValue"
        | "optional.none"
        | "hasValue"
        | "value"
        | "orValue"
        | "or"
        | "quantity"
        | "isQuantity"
        | "sign"
        | "isGreaterThan"
        | "isLessThan"
        | "compareTo"
        | "asApproximateFloat"
        | "asInteger"
        | "isInteger"
        | "add"
        | "sub" => 28,
        // ext.Strings version 2 (`format`, `strings.quote`) and ext.Sets.
        "format" | "strings.quote" | "sets.contains" | "sets.equivalent" | "sets.intersects" => 29,
        // The IP and CIDR libraries.
        "ip"
        | "isIP"
        | "ip.isCanonical"
        | "family"
        | "isUnspecified"
        | "isLoopback"
        | "isLinkLocalMulticast"
        | "isLinkLocalUnicast"
        | "isGlobalUnicast"
        | "cidr"
        | "isCIDR"
        | "containsIP"
        | "containsCIDR"
        | "prefixLength"
        | "masked" => 30,
        // The format library.
        "format.named"
        | "format.dns1123Label"
        | "format.dns1123Subdomain"
        | "format.dns1035Label"
        | "format.qualifiedName"
        | "format.dns1123LabelPrefix"
        | "format.dns1123SubdomainPrefix"
        | "format.dns1035LabelPrefix"
        | "format.labelValue"
        | "format.uri"
        | "format.uuid"
        | "format.byte"
        | "format.date"
        | "format.datetime"
        | "validate" => 31,
        // The semver library.
        "semver" | "isSemver" | "major" | "minor" | "patch" => 33,
        // ext.Lists version 3.
        "slice" | "flatten" | "distinct" | "sort" | "sortBy" | "lists.range" | "@sortByAssociatedKeys" => 34,
        // ext.Strings version 3 (`reverse`), which no Kubernetes release enables.
        "reverse" => u32::MAX,
        _ => return None,
    })
}

/// Registers Kubernetes' libraries on `env` (CEL's own and the strings extension are the
/// `cel` crate's).
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    use super::{format, net, quantity, semver, url};
    let quantity_type = || Type::new_opaque_type(quantity::TYPE);
    let url_type = || Type::new_opaque_type(url::TYPE);
    let ip_type = || Type::new_opaque_type(net::IP_TYPE);
    let cidr_type = || Type::new_opaque_type(net::CIDR_TYPE);
    let semver_type = || Type::new_opaque_type(semver::TYPE);
    // Lists (`library/lists.go`, every version).
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], lift!(is_sorted))?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], lift!(sum))?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], lift!(min))?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], lift!(max))?;
    env.add_member_overload("indexOf", "list_index_of", LIST_TYPE, vec![DYN_TYPE], lift!(index_of))?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        lift!(last_index_of),
    )?;
    // CEL's own `matches` (cel-go's standard library).
    env.add_overload("matches", "matches", vec![STRING_TYPE, STRING_TYPE], lift!(matches))?;
    env.add_member_overload(
        "matches",
        "matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        lift!(matches),
    )?;
    // Regular expressions (`library/regex.go`, every version).
    env.add_member_overload(
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        lift!(find),
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        lift!(find_all),
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        lift!(find_all),
    )?;
    // URLs (`library/urls.go`, every version).
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], lift!(url::url))?;
    env.add_overload("isURL", "is_url_string", vec![STRING_TYPE], lift!(url::is_url))?;
    env.add_member_overload(
        "getScheme",
        "url_get_scheme",
        url_type(),
        vec![],
        lift!(url::get_scheme),
    )?;
    env.add_member_overload("getHost", "url_get_host", url_type(), vec![], lift!(url::get_host))?;
    env.add_member_overload(
        "getHostname",
        "url_get_hostname",
        url_type(),
        vec![],
        lift!(url::get_hostname),
    )?;
    env.add_member_overload("getPort", "url_get_port", url_type(), vec![], lift!(url::get_port))?;
    env.add_member_overload(
        "getEscapedPath",
        "url_get_escaped_path",
        url_type(),
        vec![],
        lift!(url::get_escaped_path),
    )?;
    env.add_member_overload("getQuery", "url_get_query", url_type(), vec![], lift!(url::get_query))?;
    // Quantities (`library/quantity.go`, 1.28).
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        lift!(quantity::quantity),
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        lift!(quantity::is_quantity),
    )?;
    env.add_member_overload("sign", "quantity_sign", quantity_type(), vec![], lift!(quantity::sign))?;
    for (name, id, f) in [
        (
            "isGreaterThan",
            "quantity_is_greater_than",
            lift!(quantity::is_greater_than) as cel::common::functions::Function,
        ),
        ("isLessThan", "quantity_is_less_than", lift!(quantity::is_less_than)),
        ("compareTo", "quantity_compare_to", lift!(quantity::compare_to)),
        ("add", "quantity_add", lift!(quantity::add)),
        ("sub", "quantity_sub", lift!(quantity::sub)),
    ] {
        env.add_member_overload(name, id, quantity_type(), vec![quantity_type()], f)?;
    }
    env.add_member_overload(
        "add",
        "quantity_add_int",
        quantity_type(),
        vec![INT_TYPE],
        lift!(quantity::add),
    )?;
    env.add_member_overload(
        "sub",
        "quantity_sub_int",
        quantity_type(),
        vec![INT_TYPE],
        lift!(quantity::sub),
    )?;
    env.add_member_overload(
        "asApproximateFloat",
        "quantity_get_float",
        quantity_type(),
        vec![],
        lift!(quantity::as_approximate_float),
    )?;
    env.add_member_overload(
        "asInteger",
        "quantity_get_int",
        quantity_type(),
        vec![],
        lift!(quantity::as_integer),
    )?;
    env.add_member_overload(
        "isInteger",
        "quantity_is_integer",
        quantity_type(),
        vec![],
        lift!(quantity::is_integer),
    )?;
    // IP addresses and CIDRs (`library/ip.go`, `library/cidr.go`, 1.30).
    env.add_overload("ip", "string_to_ip", vec![STRING_TYPE], lift!(net::ip))?;
    env.add_overload("isIP", "is_ip", vec![STRING_TYPE], lift!(net::is_ip))?;
    env.add_overload(
        "ip.isCanonical",
        "ip_is_canonical",
        vec![STRING_TYPE],
        lift!(net::is_canonical),
    )?;
    env.add_member_overload("family", "ip_family", ip_type(), vec![], lift!(net::family))?;
    env.add_member_overload(
        "isUnspecified",
        "ip_is_unspecified",
        ip_type(),
        vec![],
        lift!(net::is_unspecified),
    )?;
    env.add_member_overload(
        "isLoopback",
        "ip_is_loopback",
        ip_type(),
        vec![],
        lift!(net::is_loopback),
    )?;
    env.add_member_overload(
        "isLinkLocalMulticast",
        "ip_is_link_local_multicast",
        ip_type(),
        vec![],
        lift!(net::is_link_local_multicast),
    )?;
    env.add_member_overload(
        "isLinkLocalUnicast",
        "ip_is_link_local_unicast",
        ip_type(),
        vec![],
        lift!(net::is_link_local_unicast),
    )?;
    env.add_member_overload(
        "isGlobalUnicast",
        "ip_is_global_unicast",
        ip_type(),
        vec![],
        lift!(net::is_global_unicast),
    )?;
    env.add_overload("string", "ip_to_string", vec![ip_type()], lift!(net::ip_string))?;
    env.add_overload("cidr", "string_to_cidr", vec![STRING_TYPE], lift!(net::cidr))?;
    env.add_overload("isCIDR", "is_cidr", vec![STRING_TYPE], lift!(net::is_cidr))?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_string",
        cidr_type(),
        vec![STRING_TYPE],
        lift!(net::contains_ip),
    )?;
    env.add_member_overload(
        "containsIP",
        "cidr_contains_ip_ip",
        cidr_type(),
        vec![ip_type()],
        lift!(net::contains_ip),
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr_string",
        cidr_type(),
        vec![STRING_TYPE],
        lift!(net::contains_cidr),
    )?;
    env.add_member_overload(
        "containsCIDR",
        "cidr_contains_cidr",
        cidr_type(),
        vec![cidr_type()],
        lift!(net::contains_cidr),
    )?;
    env.add_member_overload("ip", "cidr_ip", cidr_type(), vec![], lift!(net::cidr_ip))?;
    env.add_member_overload(
        "prefixLength",
        "cidr_prefix_length",
        cidr_type(),
        vec![],
        lift!(net::prefix_length),
    )?;
    env.add_member_overload("masked", "cidr_masked", cidr_type(), vec![], lift!(net::masked))?;
    env.add_overload("string", "cidr_to_string", vec![cidr_type()], lift!(net::cidr_string))?;
    // Named formats (`library/format.go`, 1.31).
    let format_type = || Type::new_opaque_type(format::TYPE);
    env.add_overload("format.named", "format-named", vec![STRING_TYPE], lift!(format::named))?;
    let constants = [
        lift!(format::constant::<0>) as cel::common::functions::Function,
        lift!(format::constant::<1>),
        lift!(format::constant::<2>),
        lift!(format::constant::<3>),
        lift!(format::constant::<4>),
        lift!(format::constant::<5>),
        lift!(format::constant::<6>),
        lift!(format::constant::<7>),
        lift!(format::constant::<8>),
        lift!(format::constant::<9>),
        lift!(format::constant::<10>),
        lift!(format::constant::<11>),
        lift!(format::constant::<12>),
    ];
    for (name, f) in format::CONSTRUCTORS.into_iter().zip(constants) {
        env.add_overload(name, name, vec![], f)?;
    }
    env.add_member_overload(
        "validate",
        "format-validate",
        format_type(),
        vec![STRING_TYPE],
        lift!(format::validate),
    )?;
    // Semantic versions (`library/semverlib.go`, 1.33).
    env.add_overload("semver", "string_to_semver", vec![STRING_TYPE], lift!(semver::semver))?;
    env.add_overload(
        "semver",
        "string_bool_to_semver",
        vec![STRING_TYPE, BOOL_TYPE],
        lift!(semver::semver),
    )?;
    env.add_overload(
        "isSemver",
        "is_semver_string",
        vec![STRING_TYPE],
        lift!(semver::is_semver),
    )?;
    env.add_overload(
        "isSemver",
        "is_semver_string_bool",
        vec![STRING_TYPE, BOOL_TYPE],
        lift!(semver::is_semver),
    )?;
    for (name, id, f) in [
        (
            "isGreaterThan",
            "semver_is_greater_than",
            lift!(semver::is_greater_than) as cel::common::functions::Function,
        ),
        ("isLessThan", "semver_is_less_than", lift!(semver::is_less_than)),
        ("compareTo", "semver_compare_to", lift!(semver::compare_to)),
    ] {
        env.add_member_overload(name, id, semver_type(), vec![semver_type()], f)?;
    }
    env.add_member_overload("major", "semver_major", semver_type(), vec![], lift!(semver::major))?;
    env.add_member_overload("minor", "semver_minor", semver_type(), vec![], lift!(semver::minor))?;
    env.add_member_overload("patch", "semver_patch", semver_type(), vec![], lift!(semver::patch))?;
    // Sets (cel-go's `ext.Sets`, 1.29): by hand, the `cel` crate has no sets extension.
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        vec![LIST_TYPE, LIST_TYPE],
        lift!(sets_contains),
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        vec![LIST_TYPE, LIST_TYPE],
        lift!(sets_equivalent),
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        vec![LIST_TYPE, LIST_TYPE],
        lift!(sets_intersects),
    )?;
    // cel-go's `ext.Lists` version 3 (1.34) is the `cel` crate's lists extension.
    cel::extensions::lists(env)?;
    Ok(())
}

/// The two list arguments of a sets function.
fn two_lists<'a>(args: &'a [Value], function: &str) -> Result<(&'a [Value], &'a [Value]), ExecutionError> {
    match args {
        [Value::List(a), Value::List(b)] => Ok((a, b)),
        _ => Err(no_overload(function)),
    }
}

/// CEL's equality across numeric types (`1 == 1.0`), as cel-go's sets compare.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Int(x), Value::Float(y)) | (Value::Float(y), Value::Int(x)) => (*x as f64) == *y,
        (Value::UInt(x), Value::Float(y)) | (Value::Float(y), Value::UInt(x)) => (*x as f64) == *y,
        (Value::Int(x), Value::UInt(y)) | (Value::UInt(y), Value::Int(x)) => u64::try_from(*x).is_ok_and(|x| x == *y),
        _ => a == b,
    }
}

/// `sets.contains(a, b)`: every element of `b` is in `a`.
fn sets_contains(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(args, "sets.contains")?;
    Ok(Value::Bool(b.iter().all(|x| a.iter().any(|y| same(x, y)))))
}

/// `sets.equivalent(a, b)`: each contains the other.
fn sets_equivalent(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(args, "sets.equivalent")?;
    Ok(Value::Bool(
        b.iter().all(|x| a.iter().any(|y| same(x, y))) && a.iter().all(|x| b.iter().any(|y| same(x, y))),
    ))
}

/// `sets.intersects(a, b)`: some element of `a` is in `b`.
fn sets_intersects(args: &[Value]) -> Result<Value, ExecutionError> {
    let (a, b) = two_lists(args, "sets.intersects")?;
    Ok(Value::Bool(a.iter().any(|x| b.iter().any(|y| same(x, y)))))
}

/// A function's error, as cel-go's `types.NewErr` words it.
pub fn error(function: &str, message: impl Into<String>) -> ExecutionError {
    ExecutionError::FunctionError {
        function: function.to_owned(),
        message: message.into(),
    }
}

/// cel-go's error for arguments no overload takes.
pub fn no_overload(function: &str) -> ExecutionError {
    ExecutionError::no_such_overload(function, Vec::new())
}

/// The elements of the receiver list.
fn list<'a>(args: &'a [Value], function: &str) -> Result<&'a [Value], ExecutionError> {
    match args.first() {
        Some(Value::List(l)) => Ok(l),
        _ => Err(no_overload(function)),
    }
}

/// CEL's ordering of two values of one comparable type.
fn compare(a: &Value, b: &Value, function: &str) -> Result<Ordering, ExecutionError> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(x.cmp(y)),
        (Value::UInt(x), Value::UInt(y)) => Ok(x.cmp(y)),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(y).ok_or_else(|| no_overload(function)),
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Bytes(x), Value::Bytes(y)) => Ok(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Ok(x.cmp(y)),
        (Value::Duration(x), Value::Duration(y)) => Ok(x.cmp(y)),
        (Value::Timestamp(x), Value::Timestamp(y)) => Ok(x.cmp(y)),
        _ => Err(no_overload(function)),
    }
}

/// `list.isSorted()`.
fn is_sorted(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list(args, "isSorted")?;
    for pair in items.windows(2) {
        if compare(&pair[0], &pair[1], "isSorted")? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// `list.sum()`: 0 of the elements' type for an empty list (an `int` 0 when the type is not
/// known, as for a list of `int`).
fn sum(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list(args, "sum")?;
    let Some((first, rest)) = items.split_first() else {
        return Ok(Value::Int(0));
    };
    let mut acc = first.clone();
    for item in rest {
        acc = match (&acc, item) {
            (Value::Int(x), Value::Int(y)) => x
                .checked_add(*y)
                .map(Value::Int)
                .ok_or_else(|| error("sum", "integer overflow"))?,
            (Value::UInt(x), Value::UInt(y)) => x
                .checked_add(*y)
                .map(Value::UInt)
                .ok_or_else(|| error("sum", "unsigned integer overflow"))?,
            (Value::Float(x), Value::Float(y)) => Value::Float(x + y),
            (Value::Duration(x), Value::Duration(y)) => x
                .checked_add(y)
                .map(Value::Duration)
                .ok_or_else(|| error("sum", "integer overflow"))?,
            _ => return Err(no_overload("sum")),
        };
    }
    Ok(acc)
}

/// `list.min()` and `list.max()`: the first of the least (greatest) elements.
fn extreme(args: &[Value], function: &str, prefer: Ordering) -> Result<Value, ExecutionError> {
    let items = list(args, function)?;
    let mut best: Option<&Value> = None;
    for item in items {
        best = match best {
            None => Some(item),
            Some(b) if compare(b, item, function)? == prefer => Some(item),
            keep => keep,
        };
    }
    best.cloned()
        .ok_or_else(|| error(function, format!("{function} called on empty list")))
}

/// `list.min()`.
fn min(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme(args, "min", Ordering::Greater)
}

/// `list.max()`.
fn max(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme(args, "max", Ordering::Less)
}

/// `list.indexOf(x)`.
fn index_of(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list(args, "indexOf")?;
    let item = args.get(1).ok_or_else(|| no_overload("indexOf"))?;
    Ok(Value::Int(
        items.iter().position(|e| e == item).map_or(-1, |i| i as i64),
    ))
}

/// `list.lastIndexOf(x)`.
fn last_index_of(args: &[Value]) -> Result<Value, ExecutionError> {
    let items = list(args, "lastIndexOf")?;
    let item = args.get(1).ok_or_else(|| no_overload("lastIndexOf"))?;
    Ok(Value::Int(
        items.iter().rposition(|e| e == item).map_or(-1, |i| i as i64),
    ))
}

/// The string argument at `index`.
pub fn string_arg<'a>(args: &'a [Value], index: usize, function: &str) -> Result<&'a str, ExecutionError> {
    match args.get(index) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(no_overload(function)),
    }
}

/// The function name of an error that means "this module cannot evaluate the rule" (a regular
/// expression `regex-lite` cannot read, a time zone the module does not carry), never that the
/// API server would refuse: the rule is skipped rather than answered wrongly.
pub const NOT_EVALUATED: &str = "syncguard: not evaluated";

/// A regular expression of RE2's syntax (Go's `regexp`), as the schemas' `pattern`s read it.
/// One `regex-lite` cannot read (a Unicode class, Unicode case folding; an invalid one, which the
/// API server refuses when it compiles the CRD) leaves the rule not evaluated.
fn regex(pattern: &str) -> Result<regex_lite::Regex, ExecutionError> {
    go_regex(pattern).map_err(|e| error(NOT_EVALUATED, format!("regular expression: {e}")))
}

/// `string.matches(regex)` and `matches(string, regex)` (CEL's standard library; the `cel`
/// crate's needs its `regex` feature, whose Unicode tables a module cannot afford).
fn matches(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg(args, 0, "matches")?;
    let re = regex(string_arg(args, 1, "matches")?)?;
    Ok(Value::Bool(re.is_match(s)))
}

/// `string.find(regex)`: the first match, or `""`.
fn find(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg(args, 0, "find")?;
    let re = regex(string_arg(args, 1, "find")?)?;
    Ok(Value::String(Arc::new(
        re.find(s).map_or("", |m| m.as_str()).to_owned(),
    )))
}

/// `string.findAll(regex)` and `string.findAll(regex, n)`: at most `n` matches (all for a
/// negative `n`).
fn find_all(args: &[Value]) -> Result<Value, ExecutionError> {
    let s = string_arg(args, 0, "findAll")?;
    let re = regex(string_arg(args, 1, "findAll")?)?;
    let limit = match args.get(2) {
        None => usize::MAX,
        Some(Value::Int(n)) => usize::try_from(*n).unwrap_or(usize::MAX),
        Some(_) => return Err(no_overload("findAll")),
    };
    let found = re
        .find_iter(s)
        .take(limit)
        .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
        .collect();
    Ok(Value::List(Arc::new(found)))
}
