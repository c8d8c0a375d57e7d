//! What a rule costs when it runs (`k8s.io/apiserver/pkg/apis/cel/config.go`: `PerCallLimit`
//! 1,000,000 per rule, `RuntimeCELCostBudget` 10,000,000 per request), in cel-go's units
//! (`interpreter/runtimecost.go`, with Kubernetes' `library/cost.go` for its functions).
//!
//! The `cel` crate's interpreter cannot be stopped midway or asked what it did, so two figures
//! are computed by hand, one on each side of cel-go's actual cost:
//!
//! - **before** a rule runs, a bound (`estimate`): the rule's tree walked with the sizes of the
//!   values it reads (the lists and strings under `self` and `oldSelf`, as they are), each
//!   comprehension costing its body times the length of what it iterates, each string or
//!   regular expression function the length it reads. A rule whose bound passes the per-call
//!   limit does not run and is reported with the API server's message for a rule stopped at that
//!   limit, so no input can make a rule run unbounded. The bound is at least cel-go's actual cost
//!   in the shapes CRD rules take, so a rule the API server stops is stopped here too; a rule close
//!   to the limit may be stopped here where cel-go's short-circuits let it finish.
//! - **after** it ran, a floor ([`floor`]), charged to the request's budget: the rule replayed
//!   step by step on its values, each step charged what cel-go's cost tracker charges it (an
//!   identifier or a field selection 1, a constant 0, a call 1 or its size-dependent price, a list
//!   or map built 10 or 30, `&&`, `||` and `?:` nothing of their own, a `?:` branch that is a
//!   path not its root, a conversion of a constant nothing) and each short-circuit taking
//!   the branch the values decide, as cel-go's does; a comprehension runs its loop as cel-go's
//!   fold does (its condition, then its step, for each element, stopping where the condition is
//!   false, then its result). It is cel-go's actual cost exactly on the rules CRDs write (paths,
//!   comparisons, arithmetic, `size`, `matches`, `contains`, `startsWith`, the macros), and never
//!   more than it: where the price of a step is not known here for certain it counts 0 (a function
//!   of Kubernetes' libraries, whose prices `library/cost.go` sets by the sizes it reads, `has()`,
//!   whose presence test is free in recent releases, a list of constants the optimiser folds), and
//!   where a value is an error (which cel-go may or may not go on past) the replay stops there.
//!   The values that decide the branches are the `cel` crate's, which are the rule's own answer's
//!   too: a branch is replayed only where the rule's evaluation takes it. One exception to "never
//!   more": a comprehension over a map that stops early (`all`, `exists`) follows the `cel`
//!   crate's key order, where cel-go's is Go's map order, which varies between runs, so its cost
//!   there may be more or less than a given run of the API server's.
//!   The bound is up to ~1.5x cel-go's cost on nested comprehensions, so it could not be charged:
//!   summed over a request it would refuse objects the API server accepts; the floor cannot.
//!
//! A request's rules share one [`Budget`], spent in the order the API server runs them; once a
//! rule's floor passes what is left, that rule's node is reported and no rule runs after it.

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr};
use cel::objects::OptionalValue;
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

/// What is left of one request's budget (`remainingBudget`): negative once the rules stopped.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    remaining: i64,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            remaining: REQUEST_BUDGET as i64,
        }
    }
}

impl Budget {
    /// Whether the rules stopped (a rule ran out of the budget or passed the per-call limit): no
    /// rule runs and nothing more is reported.
    pub fn stopped(&self) -> bool {
        self.remaining < 0
    }

    /// Whether nothing is left: the next node with rules is reported out of budget
    /// (`remainingBudget <= 0`).
    pub fn spent(&self) -> bool {
        self.remaining <= 0
    }

    /// Stops the rules.
    pub fn stop(&mut self) {
        self.remaining = -1;
    }
}

/// How a rule's run ended.
pub enum Run {
    /// It ran.
    Done(ResolveResult),
    /// Its cost passes what is left of the request's budget.
    OverBudget,
    /// Its bound passes the per-call limit.
    OverCallLimit,
}

/// Runs `program` if its bound fits the per-call limit, then charges `budget` its floor.
pub fn run(
    program: &Program,
    context: &Context<'_, '_>,
    self_value: &Value,
    old_self: Option<&Value>,
    budget: &mut Budget,
) -> Run {
    let bound = estimate(program.expression(), &mut Vec::new(), self_value, old_self);
    if bound > PER_CALL_LIMIT {
        // The API server compares a cancelled rule's cost (past the per-call limit) with what
        // is left before it looks at the error (`validateExpressions`): with no more than the
        // limit left, it says the budget ran out.
        let out_of_budget = budget.remaining <= PER_CALL_LIMIT as i64;
        budget.stop();
        return if out_of_budget {
            Run::OverBudget
        } else {
            Run::OverCallLimit
        };
    }
    let result = program.execute(context);
    let cost = floor(program.expression(), context);
    match i64::try_from(cost) {
        Ok(cost) if cost <= budget.remaining => {
            budget.remaining -= cost;
            Run::Done(result)
        }
        _ => {
            budget.stop();
            Run::OverBudget
        }
    }
}

/// A floor under cel-go's actual cost of `expr` evaluated in `context` (the module's doc says
/// how it is counted and why it is never more).
pub fn floor(expr: &IdedExpr, context: &Context<'_, '_>) -> u64 {
    meter(expr, context).0
}

/// The floor of `expr` and its value: none where it fails, and where the replay stopped short.
/// The replay computes the values of the few operators it branches on most (comparisons,
/// integer sums) itself and asks the `cel` crate for any other, which evaluates that node's
/// subtree again: a rule of the usual shapes is evaluated about once more, but a comprehension
/// under several levels the replay does not compute (`self.filter(...).size() * 2 * 2`) is run
/// again at each of them (the parser's depth limit bounds how often).
fn meter(expr: &IdedExpr, context: &Context<'_, '_>) -> (u64, Option<Value>) {
    match &expr.expr {
        Expr::Literal(_) | Expr::Ident(_) => {
            let cost = u64::from(matches!(expr.expr, Expr::Ident(_)));
            (cost, Value::resolve(expr, context).ok())
        }
        Expr::Select(select) => {
            let (operand, value) = meter(&select.operand, context);
            if value.is_none() {
                return (operand, None);
            }
            match Value::resolve(expr, context) {
                // `has()`: its presence test is free since cel-go's `PresenceTestHasCost(false)`.
                Ok(value) => (operand.saturating_add(u64::from(!select.test)), Some(value)),
                Err(_) => (operand, None),
            }
        }
        Expr::Call(call) => call_meter(expr, call, context),
        Expr::Comprehension(c) => comprehension_meter(c, context),
        Expr::List(list) => {
            let cost = parts_floor(list.elements.iter(), context);
            // A list of constants is folded into a constant by cel-go's optimiser.
            let cost = match cost {
                Some(cost) if is_constant(expr) => cost,
                Some(cost) => cost.saturating_add(10),
                None => return (0, None),
            };
            (cost, Value::resolve(expr, context).ok())
        }
        Expr::Map(map) => {
            let parts = map.entries.iter().flat_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(e) => vec![&e.key, &e.value],
                EntryExpr::StructField(f) => vec![&f.value],
            });
            let cost = match parts_floor(parts, context) {
                Some(cost) if is_constant(expr) => cost,
                Some(cost) => cost.saturating_add(30),
                None => return (0, None),
            };
            (cost, Value::resolve(expr, context).ok())
        }
        Expr::Struct(_) | Expr::Unspecified => (0, None),
    }
}

/// The floor of a list's or map's parts; none when one fails (cel-go stops there, and the
/// floor counts nothing of the list).
fn parts_floor<'e>(parts: impl Iterator<Item = &'e IdedExpr>, context: &Context<'_, '_>) -> Option<u64> {
    let mut cost: u64 = 0;
    for part in parts {
        let (c, value) = meter(part, context);
        value?;
        cost = cost.saturating_add(c);
    }
    Some(cost)
}

/// cel-go's type conversion functions (`overloads.IsTypeConversionFunction`).
const CONVERSIONS: [&str; 10] = [
    "bool",
    "bytes",
    "double",
    "duration",
    "dyn",
    "int",
    "string",
    "timestamp",
    "type",
    "uint",
];

/// Whether `expr` is a path cel-go plans as one attribute: an identifier, then field selections
/// (not `has()`) and indexes. As a branch of `?:` its root costs nothing: cel-go's conditional
/// attribute resolves the branch's attribute without the step that charges the root
/// (`planner.go`, `planCallConditional`; `TestRuntimeCost`'s `filter`, whose rejected elements
/// keep `accu` for free).
fn is_path(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Ident(_) => true,
        Expr::Select(select) => !select.test && is_path(&select.operand),
        Expr::Call(call) => {
            call.func_name == "_[_]"
                && call.target.is_none()
                && matches!(call.args.as_slice(), [operand, _] if is_path(operand))
        }
        _ => false,
    }
}

/// Whether `expr` is a constant for cel-go's optimiser: a literal, or a list or map of them.
fn is_constant(expr: &IdedExpr) -> bool {
    match &expr.expr {
        Expr::Literal(_) => true,
        // A type conversion of a constant (`duration('1h')`, `int('5')`) is folded into its
        // value by cel-go's optimiser (`decorators.go`, `maybeOptimizeConstUnary`).
        Expr::Call(call) => {
            call.target.is_none()
                && CONVERSIONS.contains(&call.func_name.as_str())
                && matches!(call.args.as_slice(), [arg] if is_constant(arg))
        }
        Expr::List(list) => list.elements.iter().all(is_constant),
        Expr::Map(map) => map.entries.iter().all(|entry| match &entry.expr {
            EntryExpr::MapEntry(e) => is_constant(&e.key) && is_constant(&e.value),
            EntryExpr::StructField(_) => false,
        }),
        _ => false,
    }
}

/// The floor of a call and its value: its operands as cel-go evaluates them, and its own price.
fn call_meter(expr: &IdedExpr, call: &CallExpr, context: &Context<'_, '_>) -> (u64, Option<Value>) {
    let name = call.func_name.as_str();
    match (name, call.args.as_slice()) {
        // No cost of their own; the right-hand side runs only when the left does not decide.
        ("_&&_" | "_||_", [lhs, rhs]) if call.target.is_none() => {
            let (cost, left) = meter(lhs, context);
            let go_on = name == "_&&_";
            return match left {
                Some(Value::Bool(b)) if b == go_on => {
                    let (more, right) = meter(rhs, context);
                    let value = match right {
                        Some(Value::Bool(b)) => Some(Value::Bool(b)),
                        _ => None,
                    };
                    (cost.saturating_add(more), value)
                }
                Some(Value::Bool(b)) => (cost, Some(Value::Bool(b))),
                _ => (cost, None),
            };
        }
        ("_?_:_", [cond, truthy, falsy]) if call.target.is_none() => {
            let (cost, chosen) = meter(cond, context);
            let branch = match chosen {
                Some(Value::Bool(true)) => truthy,
                Some(Value::Bool(false)) => falsy,
                _ => return (cost, None),
            };
            let (more, value) = meter(branch, context);
            let more = if is_path(branch) { more.saturating_sub(1) } else { more };
            return (cost.saturating_add(more), value);
        }
        _ => {}
    }
    if is_constant(expr) {
        return (0, Value::resolve(expr, context).ok());
    }
    // Every operand runs, the target first; one that fails ends the call without its price.
    let mut cost: u64 = 0;
    let mut values = Vec::with_capacity(call.args.len() + 1);
    for operand in call.target.as_deref().into_iter().chain(&call.args) {
        let (c, value) = meter(operand, context);
        cost = cost.saturating_add(c);
        match value {
            Some(value) => values.push(value),
            None => return (cost, None),
        }
    }
    let own = match (name, values.as_slice()) {
        // A membership test in a list of constants is a set lookup once optimised.
        ("@in", [_, _]) if call.args.last().is_some_and(is_constant) => 0,
        ("@in", [_, Value::List(list)]) => list.len() as u64,
        ("_==_" | "_!=_", [a, b]) => traversal(size(a).min(size(b))),
        ("_<_" | "_<=_" | "_>_" | "_>=_", [a, b]) => match (a, b) {
            (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
                traversal(size(a).min(size(b)))
            }
            _ => 1,
        },
        ("_+_", [a, b]) => match (a, b) {
            (Value::String(_), Value::String(_)) | (Value::Bytes(_), Value::Bytes(_)) => {
                traversal(size(a).saturating_add(size(b)))
            }
            _ => 1,
        },
        // Only the method form is priced by its sizes (`overloads.MatchesString`); the global
        // `matches(s, re)` costs 1, as any call (`runtimecost.go`, `costCall`).
        ("matches", [Value::String(s), Value::String(re)]) if call.target.is_some() => {
            traversal(size_of_str(s).saturating_add(1)).saturating_mul(size_of_str(re).div_ceil(4))
        }
        ("contains", [Value::String(s), Value::String(sub)]) => {
            traversal(size_of_str(s)).saturating_mul(traversal(size_of_str(sub)))
        }
        ("startsWith" | "endsWith", [Value::String(s), Value::String(_)]) => traversal(size_of_str(s)),
        ("string", [Value::Bytes(b)]) => traversal(b.len() as u64),
        ("bytes", [Value::String(s)]) => traversal(size_of_str(s)),
        ("size" | "!_" | "-_" | "_-_" | "_*_" | "_/_" | "_%_" | "@not_strictly_false" | "_[_]", _)
        | ("int" | "uint" | "double" | "string" | "bool" | "bytes" | "duration" | "timestamp", [_])
        | ("matches", [_, _]) => 1,
        // Kubernetes' and the extensions' functions: priced by `library/cost.go` from sizes, maybe 0.
        _ => 0,
    };
    let value = match operate(name, &values) {
        Some(value) => Some(value),
        None => Value::resolve(expr, context).ok(),
    };
    (cost.saturating_add(own), value)
}

/// The value of the operators a replay meets most, computed from their operands' values as the
/// `cel` crate computes it; none for any other (the crate is asked).
fn operate(name: &str, values: &[Value]) -> Option<Value> {
    use std::cmp::Ordering;
    let ordering = match values {
        [Value::Int(a), Value::Int(b)] => Some(a.cmp(b)),
        [Value::UInt(a), Value::UInt(b)] => Some(a.cmp(b)),
        [Value::String(a), Value::String(b)] => Some(a.cmp(b)),
        [Value::Bool(a), Value::Bool(b)] => Some(a.cmp(b)),
        _ => None,
    };
    Some(match (name, values, ordering) {
        ("_==_", _, Some(o)) => Value::Bool(o == Ordering::Equal),
        ("_!=_", _, Some(o)) => Value::Bool(o != Ordering::Equal),
        ("_<_", [Value::Int(_) | Value::UInt(_), _], Some(o)) => Value::Bool(o == Ordering::Less),
        ("_<=_", [Value::Int(_) | Value::UInt(_), _], Some(o)) => Value::Bool(o != Ordering::Greater),
        ("_>_", [Value::Int(_) | Value::UInt(_), _], Some(o)) => Value::Bool(o == Ordering::Greater),
        ("_>=_", [Value::Int(_) | Value::UInt(_), _], Some(o)) => Value::Bool(o != Ordering::Less),
        ("_+_", [Value::Int(a), Value::Int(b)], _) => Value::Int(a.checked_add(*b)?),
        ("_-_", [Value::Int(a), Value::Int(b)], _) => Value::Int(a.checked_sub(*b)?),
        ("!_", [Value::Bool(b)], _) => Value::Bool(!b),
        ("@not_strictly_false", [Value::Bool(b)], _) => Value::Bool(*b),
        ("size", [Value::List(l)], _) => Value::Int(i64::try_from(l.len()).ok()?),
        _ => return None,
    })
}

/// cel-go's `StringTraversalCostFactor` (0.1) applied to a size, rounded up.
fn traversal(size: u64) -> u64 {
    size.div_ceil(10)
}

/// A string's size as cel-go counts it: its code points.
fn size_of_str(s: &str) -> u64 {
    s.chars().count() as u64
}

/// cel-go's `actualSize`: a string's code points, a byte string's, list's or map's length, an
/// optional's value's size, and 1 for anything else.
fn size(value: &Value) -> u64 {
    match value {
        Value::String(s) => size_of_str(s),
        Value::Bytes(b) => b.len() as u64,
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        Value::Opaque(o) => match o.downcast_ref::<OptionalValue>().and_then(OptionalValue::value) {
            Some(inner) => size(inner),
            None => 1,
        },
        _ => 1,
    }
}

/// Whether two values are the same, kind and all (`1` is not `1u` here).
fn same(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b) && a == b
}

/// One iteration of a comprehension's replay: what it started from and how it ended.
struct Iteration {
    /// The accumulator it started with.
    accu: Value,
    /// Its element (and, for two variables, the element's value).
    item: (Value, Option<Value>),
    /// Its condition's and step's floor.
    cost: u64,
    /// The accumulator after it: `Some(None)` where the condition ended the loop, `None` where
    /// the replay stopped short.
    next: Option<Option<Value>>,
}

impl Iteration {
    /// Whether an iteration from `accu` over `item` is this one again.
    fn repeats(&self, accu: &Value, item: &(Value, Option<Value>)) -> bool {
        same(&self.accu, accu)
            && same(&self.item.0, &item.0)
            && match (&self.item.1, &item.1) {
                (Some(a), Some(b)) => same(a, b),
                (None, None) => true,
                _ => false,
            }
    }
}

/// The floor of a comprehension and its value, its loop run as cel-go's fold runs it.
fn comprehension_meter(c: &ComprehensionExpr, context: &Context<'_, '_>) -> (u64, Option<Value>) {
    let (mut cost, range) = meter(&c.iter_range, context);
    let Some(range) = range else {
        return (cost, None);
    };
    let (init_cost, accu) = meter(&c.accu_init, context);
    cost = cost.saturating_add(init_cost);
    let Some(mut accu) = accu else {
        return (cost, None);
    };
    let items: Vec<(Value, Option<Value>)> = match (&range, &c.iter_var2) {
        (Value::List(list), None) => list.iter().map(|v| (v.clone(), None)).collect(),
        (Value::List(list), Some(_)) => list
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), Some(v.clone())))
            .collect(),
        (Value::Map(map), None) => map.map.keys().map(|k| (Value::from(k), None)).collect(),
        (Value::Map(map), Some(_)) => map.map.iter().map(|(k, v)| (Value::from(k), Some(v.clone()))).collect(),
        _ => return (cost, None),
    };
    // One iteration's cost and outcome, kept for the next: an element equal to the last, with
    // the same accumulator, costs the same and ends the same (a list of equal elements is then
    // replayed in one step, not one per element).
    let mut last: Option<Iteration> = None;
    for item in items {
        let reused = last.as_ref().filter(|last| last.repeats(&accu, &item));
        let (step_cost, next) = match reused {
            Some(last) => (last.cost, last.next.clone()),
            None => {
                let mut scope = context.new_inner_scope();
                scope.add_variable_from_value(c.accu_var.as_str(), accu.clone());
                scope.add_variable_from_value(c.iter_var.as_str(), item.0.clone());
                if let (Some(name), Some(value)) = (&c.iter_var2, &item.1) {
                    scope.add_variable_from_value(name.as_str(), value.clone());
                }
                let (mut step_cost, go_on) = meter(&c.loop_cond, &scope);
                // Past a condition that is false the loop ends (`Some(None)`); past one that is
                // not a boolean or a step that fails (cel-go goes on past an error; the floor
                // does not) the comprehension's value is unknown (`None`).
                let next = match go_on {
                    Some(Value::Bool(true)) => {
                        let (more, next) = meter(&c.loop_step, &scope);
                        step_cost = step_cost.saturating_add(more);
                        next.map(Some)
                    }
                    Some(Value::Bool(false)) => Some(None),
                    _ => None,
                };
                last = Some(Iteration {
                    accu: accu.clone(),
                    item: item.clone(),
                    cost: step_cost,
                    next: next.clone(),
                });
                (step_cost, next)
            }
        };
        cost = cost.saturating_add(step_cost);
        match next {
            Some(Some(next)) => accu = next,
            Some(None) => break,
            None => return (cost, None),
        }
    }
    let mut scope = context.new_inner_scope();
    scope.add_variable_from_value(c.accu_var.as_str(), accu);
    let (result_cost, value) = meter(&c.result, &scope);
    (cost.saturating_add(result_cost), value)
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
