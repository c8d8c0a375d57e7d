//! Kubernetes' CEL libraries for CRD rules (`k8s.io/apiserver/pkg/cel/library`), written by
//! hand because no crate has them: they are Kubernetes' additions to CEL, and the `cel` crate
//! has only CEL's own libraries. Each function answers as the Go library does, with its
//! error texts.
//!
//! Every function is registered once in the shared environment, taking and returning the
//! crate's [`Value`]s through [`lift`].

use cel::common::types::{DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
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

/// Registers Kubernetes' libraries on `env`.
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    // Lists (`library/lists.go`, Kubernetes 1.24).
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
    // Regular expressions (`library/regex.go`, Kubernetes 1.24).
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
    Ok(())
}

/// A function's error, as cel-go's `types.NewErr` words it.
pub fn error(function: &str, message: impl Into<String>) -> ExecutionError {
    ExecutionError::FunctionError {
        function: function.to_owned(),
        message: message.into(),
    }
}

/// cel-go's error for arguments no overload takes.
fn no_overload(function: &str) -> ExecutionError {
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

/// A regular expression of RE2's syntax (Go's `regexp`), which the `regex` crate shares.
fn regex(pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| error("regex", format!("Illegal regex: {e}")))
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
