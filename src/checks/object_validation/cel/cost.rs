//! The bound on what a rule may cost when it runs (`k8s.io/apiserver/pkg/apis/cel/config.go`:
//! `PerCallLimit` 1,000,000 per rule, `RuntimeCELCostBudget` 10,000,000 per request).
//!
//! The `cel` crate's interpreter cannot be stopped midway or asked what it did, so the cost is
//! bounded before a rule runs, by hand: the rule's tree is walked with the sizes of the values
//! it reads (the lists and strings under `self` and `oldSelf`, as they are), each comprehension
//! costing its body times the length of what it iterates, each string or regular expression
//! function the length it reads. A rule whose bound passes the per-call limit does not run and
//! is reported with the API server's message for a rule stopped at that limit, so no input can
//! make a rule run unbounded. The bound is at least cel-go's actual cost in the shapes CRD
//! rules take, so a rule the API server stops is stopped here too; a rule close to the limit
//! may be stopped here where cel-go's short-circuits let it finish.

use cel::common::ast::{Expr, IdedExpr};
use cel::{Context, Program, ResolveResult, Value};

/// The most one rule may cost (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The most one request's rules may cost together (`RuntimeCELCostBudget`).
pub const REQUEST_BUDGET: u64 = 10_000_000;
/// cel-go's error for a rule stopped at the per-call limit.
pub const CALL_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// The API server's error once a request's budget is spent.
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";

/// What is left of one request's budget.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    remaining: u64,
    spent_out: bool,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            remaining: REQUEST_BUDGET,
            spent_out: false,
        }
    }
}

impl Budget {
    /// Whether the budget is spent and no rule may run any more.
    pub fn exhausted(&self) -> bool {
        self.spent_out
    }
}

/// How a rule's run ended.
pub enum Run {
    /// It ran.
    Done(ResolveResult),
    /// Its bound passes what is left of the request's budget.
    OverBudget,
    /// Its bound passes the per-call limit.
    OverCallLimit,
}

/// Runs `program` if its bound fits the limits, charging the bound to `budget`.
pub fn run(
    program: &Program,
    context: &Context<'_, '_>,
    self_value: &Value,
    old_self: Option<&Value>,
    budget: &mut Budget,
) -> Run {
    let bound = estimate(program.expression(), &mut Vec::new(), self_value, old_self);
    if bound > PER_CALL_LIMIT {
        budget.spent_out = true;
        return Run::OverCallLimit;
    }
    if bound > budget.remaining {
        budget.spent_out = true;
        return Run::OverBudget;
    }
    budget.remaining -= bound;
    Run::Done(program.execute(context))
}

/// The size of a value as far as the bound knows it: the value itself, or a bound on its
/// length and the length of anything within it.
#[derive(Clone, Copy)]
enum Size<'v> {
    /// The value, as it is.
    Exact(&'v Value),
    /// At most this long, and so is everything within.
    Upto(u64),
}

impl Size<'_> {
    /// A bound on the length of the value and of everything within it.
    fn deep(self) -> u64 {
        match self {
            Size::Exact(v) => deep_len(v),
            Size::Upto(n) => n,
        }
    }

    /// A bound on the length of the value itself.
    fn len(self) -> u64 {
        match self {
            Size::Exact(v) => len(v),
            Size::Upto(n) => n,
        }
    }
}

/// The length of a value: elements, entries, characters, bytes.
fn len(value: &Value) -> u64 {
    match value {
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        Value::String(s) => s.len() as u64,
        Value::Bytes(b) => b.len() as u64,
        _ => 1,
    }
}

/// The largest length of a value and of anything within it.
fn deep_len(value: &Value) -> u64 {
    match value {
        Value::List(l) => l.iter().map(deep_len).fold(l.len() as u64, u64::max),
        Value::Map(m) => m.map.values().map(deep_len).fold(m.map.len() as u64, u64::max),
        other => len(other),
    }
}

/// Functions whose cost grows with the length of the strings or lists they read.
const LINEAR: [&str; 22] = [
    "contains",
    "startsWith",
    "endsWith",
    "matches",
    "find",
    "findAll",
    "split",
    "replace",
    "indexOf",
    "lastIndexOf",
    "lowerAscii",
    "upperAscii",
    "trim",
    "join",
    "substring",
    "charAt",
    "url",
    "isURL",
    "quantity",
    "isQuantity",
    "_+_",
    "@in",
];

/// A bound on the cost of `expr` (and on the size of its value, in `sizes`), with the
/// comprehension variables in `scope`.
fn estimate<'v>(
    expr: &'v IdedExpr,
    scope: &mut Vec<(&'v str, Size<'v>)>,
    self_value: &'v Value,
    old_self: Option<&'v Value>,
) -> u64 {
    walk(expr, scope, self_value, old_self).0
}

/// The cost bound of `expr` and the size of its value.
fn walk<'v, 'e: 'v>(
    expr: &'e IdedExpr,
    scope: &mut Vec<(&'v str, Size<'v>)>,
    self_value: &'v Value,
    old_self: Option<&'v Value>,
) -> (u64, Size<'v>) {
    match &expr.expr {
        Expr::Ident(name) => {
            let size = match scope.iter().rev().find(|(n, _)| n == name) {
                Some((_, size)) => *size,
                None if name == super::SELF => Size::Exact(self_value),
                None if name == super::OLD_SELF => old_self.map_or(Size::Upto(0), Size::Exact),
                None => Size::Upto(0),
            };
            (1, size)
        }
        Expr::Literal(_) => (0, Size::Upto(1)),
        Expr::Select(select) => {
            let (cost, size) = walk(&select.operand, scope, self_value, old_self);
            let size = match size {
                Size::Exact(Value::Map(m)) => m
                    .map
                    .iter()
                    .find(|(k, _)| matches!(k, cel::objects::Key::String(s) if **s == select.field))
                    .map_or(Size::Upto(0), |(_, v)| Size::Exact(v)),
                other => Size::Upto(other.deep()),
            };
            (cost.saturating_add(1), size)
        }
        Expr::Call(call) => {
            let mut cost: u64 = 1;
            let mut sizes = Vec::with_capacity(call.args.len() + 1);
            if let Some(target) = &call.target {
                let (c, s) = walk(target, scope, self_value, old_self);
                cost = cost.saturating_add(c);
                sizes.push(s);
            }
            for arg in &call.args {
                let (c, s) = walk(arg, scope, self_value, old_self);
                cost = cost.saturating_add(c);
                sizes.push(s);
            }
            let total: u64 = sizes.iter().map(|s| s.deep()).fold(0, u64::saturating_add);
            if LINEAR.contains(&call.func_name.as_str())
                || call.func_name.starts_with("_==_")
                || call.func_name == "_!=_"
            {
                cost = cost.saturating_add(total);
            }
            if call.func_name == "validate" {
                // The format library (apiserver library/cost.go `CallCost`): the string's length
                // plus one times the traversal factor (0.1), times the format's regular-expression
                // size times the regex length factor (0.25), each rounded up.
                let regex = call
                    .target
                    .as_deref()
                    .and_then(constructed_format)
                    .map_or(super::format::MAX_REGEX_SIZE, super::format::max_regex_size);
                let length = sizes.last().map_or(0, |s| s.len());
                let string = length.saturating_add(1).div_ceil(10);
                cost = cost.saturating_add(string.saturating_mul(regex.div_ceil(4)));
            }
            let size = match (call.func_name.as_str(), sizes.as_slice()) {
                ("_[_]", [Size::Exact(Value::List(l)), index]) => match index {
                    Size::Exact(Value::Int(i)) => usize::try_from(*i)
                        .ok()
                        .and_then(|i| l.get(i))
                        .map_or(Size::Upto(0), Size::Exact),
                    _ => Size::Upto(Size::Exact(sizes[0].exact_or_null()).deep()),
                },
                _ => Size::Upto(total.max(1)),
            };
            (cost, size)
        }
        Expr::Comprehension(c) => {
            let (range_cost, range) = walk(&c.iter_range, scope, self_value, old_self);
            let (init_cost, init) = walk(&c.accu_init, scope, self_value, old_self);
            let iterations = range.len();
            let item = match range {
                Size::Exact(Value::List(l)) => Size::Upto(l.iter().map(deep_len).max().unwrap_or(0)),
                Size::Exact(Value::Map(m)) => Size::Upto(m.map.values().map(deep_len).max().unwrap_or(0)),
                other => Size::Upto(other.deep()),
            };
            let depth = scope.len();
            scope.push((c.iter_var.as_str(), item));
            if let Some(second) = &c.iter_var2 {
                scope.push((second.as_str(), item));
            }
            let accumulated = Size::Upto(
                init.deep()
                    .saturating_add(iterations.saturating_mul(item.deep().max(1))),
            );
            scope.push((c.accu_var.as_str(), accumulated));
            let (cond, _) = walk(&c.loop_cond, scope, self_value, old_self);
            let (step, _) = walk(&c.loop_step, scope, self_value, old_self);
            scope.truncate(depth);
            scope.push((c.accu_var.as_str(), accumulated));
            let (result, size) = walk(&c.result, scope, self_value, old_self);
            scope.truncate(depth);
            let body = cond.saturating_add(step).saturating_add(1);
            let cost = range_cost
                .saturating_add(init_cost)
                .saturating_add(iterations.saturating_mul(body))
                .saturating_add(result);
            (cost, Size::Upto(size.deep().max(accumulated.deep())))
        }
        Expr::List(list) => {
            let mut cost: u64 = 1;
            let mut deepest: u64 = list.elements.len() as u64;
            for e in &list.elements {
                let (c, s) = walk(e, scope, self_value, old_self);
                cost = cost.saturating_add(c);
                deepest = deepest.max(s.deep());
            }
            (cost, Size::Upto(deepest))
        }
        Expr::Map(map) => {
            let mut cost: u64 = 1;
            let mut deepest: u64 = map.entries.len() as u64;
            for entry in &map.entries {
                if let cel::common::ast::EntryExpr::MapEntry(e) = &entry.expr {
                    for part in [&e.key, &e.value] {
                        let (c, s) = walk(part, scope, self_value, old_self);
                        cost = cost.saturating_add(c);
                        deepest = deepest.max(s.deep());
                    }
                }
            }
            (cost, Size::Upto(deepest))
        }
        Expr::Struct(_) | Expr::Unspecified => (1, Size::Upto(0)),
    }
}

/// The format a `format.<name>()` call makes: its name.
fn constructed_format(expr: &IdedExpr) -> Option<&str> {
    match &expr.expr {
        Expr::Call(call)
            if call.args.is_empty()
                && matches!(call.target.as_deref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "format") =>
        {
            Some(call.func_name.as_str())
        }
        _ => None,
    }
}

impl<'v> Size<'v> {
    /// The value, when exact.
    fn exact_or_null(self) -> &'v Value {
        match self {
            Size::Exact(v) => v,
            Size::Upto(_) => &Value::Null,
        }
    }
}
