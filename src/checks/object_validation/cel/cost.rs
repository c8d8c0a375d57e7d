//! What a rule costs when it runs (`k8s.io/apiserver/pkg/apis/cel/config.go`: `PerCallLimit`
//! 1,000,000 per rule, `RuntimeCELCostBudget` 10,000,000 per request), in cel-go's units
//! (`interpreter/runtimecost.go`, with Kubernetes' `library/cost.go` for its functions).
//!
//! The `cel` crate's interpreter cannot be stopped midway or asked what it did, so two figures
//! are computed by hand, one on each side of cel-go's actual cost:
//!
//! - a bound (`estimate`), before anything runs: the rule's tree walked with the sizes of the
//!   values it reads (the lists and strings under `self` and `oldSelf`, as they are), each
//!   comprehension costing its body times the length of what it iterates, each string or
//!   regular expression function the length it reads. It is at least cel-go's actual cost in the
//!   shapes CRD rules take, and up to ~1.5x it on nested comprehensions (it cannot know where
//!   short-circuits stop), so it decides nothing but which way a rule runs: a rule whose bound
//!   fits the per-call limit runs as it is, then is replayed for its floor; any other is replayed
//!   first, capped ([`decide`]).
//! - a floor ([`floor`]), charged to the request's budget: the rule replayed step by step on its
//!   values, each step charged what cel-go's cost tracker charges it (an identifier or a field
//!   selection 1, a constant 0, a call 1 or its size-dependent price, a list or map built 10 or
//!   30, `&&`, `||` and `?:` nothing of their own, a `?:` branch that is a path not its root, a
//!   conversion of a constant nothing, the string functions of Kubernetes' libraries and a
//!   format's `validate` what `library/cost.go` prices them) and each short-circuit taking the
//!   branch the values decide, as cel-go's does; a comprehension runs its loop as cel-go's fold
//!   does (its condition, then its step, for each element, stopping where the condition is
//!   false, then its result). It is cel-go's actual cost exactly on the rules CRDs write (paths,
//!   comparisons, arithmetic, `size`, `matches`, `contains`, `startsWith`, the macros, the string
//!   functions), and never more than it: where the price of a step is not known here for certain
//!   it counts 0 (the other functions of Kubernetes' libraries, `has()`, whose presence test is
//!   free in recent releases, a list of constants the optimiser folds), and where a value is an
//!   error (which cel-go may or may not go on past) the replay stops there. The values that
//!   decide the branches are the `cel` crate's, which are the rule's own answer's too: a branch is
//!   replayed only where the rule's evaluation takes it. One exception to "never more": a
//!   comprehension over a map that stops early (`all`, `exists`) follows the `cel` crate's key
//!   order, where cel-go's is Go's map order, which varies between runs, so its cost there may be
//!   more or less than a given run of the API server's.
//!
//! The per-call limit is decided by the floor, as cel-go's is by its actual cost: a rule whose
//! bound passes the limit is replayed with its floor capped at the limit, the replay stopping
//! at the step that passes it (the rule is then reported with cel-go's `operation cancelled:
//! actual cost limit exceeded`, as cel-go's tracker stops it at that step); where it ends under
//! the limit, its value is the rule's answer and its floor is charged, the rule never run
//! again. So a rule is refused at the limit exactly where cel-go's actual cost passes it, not
//! where the bound does.
//!
//! Every run stays bounded, the replay's included. The replay computes each node once per
//! time the rule's evaluation reaches it: a step asks the `cel` crate only for its own value,
//! the node copied with its operands replaced by fresh identifiers (`@syncguard0`, ...; no rule
//! can spell one) bound to the values the replay computed for them, so the crate never
//! evaluates a subtree (a selection on a comprehension, a call on one, a list of them); the
//! comprehensions themselves are run by the replay's own loop, their variables and `self` held
//! as values and read as they are; a field of a map, an entry of a list or map, the comparisons
//! and integer sums are computed by the replay itself; constants are evaluated whole, bounded
//! by the rule's text. And every step's work is counted: one per node visited and per
//! iteration, plus the sizes of the values the crate copies (a step's operands bound to its
//! fresh identifiers and its answer copied out, a variable read out of the context, a constant)
//! and of the elements compared to reuse an iteration. A capped replay stops once that work
//! passes [`WORK_LIMIT`] (10x the limit: cel-go prices a string a tenth of its length) as well
//! as where its floor passes the limit, so no input makes it, or the module, run unbounded: a
//! rule whose bound fits the limit runs once in the crate (bounded by that bound) and is
//! replayed once (the same steps), any other is replayed once, under both caps, and never run
//! (the review's example replays with 2.3 units of work per unit of cel-go's cost).
//!
//! What is left of the false refusal: a capped replay that cannot say is reported at the limit,
//! as the bound reported it before: where a step fails (cel-go may go on past an error, as in
//! `a || b` with `a` an error and `b` true, or an `exists` past an element that fails), and where
//! the work passes its cap before the floor passes the limit (a rule whose unpriced steps read far
//! more than cel-go charges: a `map` or `filter` building a list of thousands of elements, whose
//! appends the replay copies, or functions of Kubernetes' libraries priced 0 here on long
//! strings). A rule on the first row of 300 to 377 elements of the review's example, refused here
//! before, runs (`tests.rs`, `a_rule_under_the_call_limit_runs_whatever_its_bound`).
//!
//! A request's rules share one [`Budget`], spent in the order the API server runs them; once a
//! rule's floor passes what is left, that rule's node is reported and no rule runs after it.

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr, MapEntryExpr, MapExpr, SelectExpr,
};
use cel::objects::{KeyRef, OptionalValue};
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

/// The most work a rule's replay may do when its bound passes the per-call limit: ten times
/// the limit, as cel-go charges a string a tenth of its length (`StringTraversalCostFactor`).
pub const WORK_LIMIT: u64 = 10 * PER_CALL_LIMIT;

/// How a rule's run ended.
pub enum Run {
    /// It ran.
    Done(ResolveResult),
    /// Its cost passes what is left of the request's budget.
    OverBudget,
    /// Its cost passes the per-call limit.
    OverCallLimit,
}

/// Runs `program` and charges `budget` its floor. A rule whose bound fits the per-call limit
/// runs; any other is replayed, capped ([`decide`]).
pub fn run(
    program: &Program,
    context: &Context<'_, '_>,
    self_value: &Value,
    old_self: Option<&Value>,
    budget: &mut Budget,
) -> Run {
    let bound = bound(program.expression(), self_value, old_self);
    let (result, cost) = if bound > PER_CALL_LIMIT {
        match decide(program.expression(), context, self_value) {
            Some(ran) => ran,
            None => {
                // The API server compares a cancelled rule's cost (past the per-call limit) with
                // what is left before it looks at the error (`validateExpressions`): with no more
                // than the limit left, it says the budget ran out.
                let out_of_budget = budget.remaining <= PER_CALL_LIMIT as i64;
                budget.stop();
                return if out_of_budget {
                    Run::OverBudget
                } else {
                    Run::OverCallLimit
                };
            }
        }
    } else {
        let result = program.execute(context);
        (result, floor_of_rule(program.expression(), context, self_value))
    };
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

/// The bound on what `expr` may cost with `self` and `oldSelf` as given, before it runs.
pub fn bound(expr: &IdedExpr, self_value: &Value, old_self: Option<&Value>) -> u64 {
    estimate(expr, &mut Vec::new(), self_value, old_self)
}

/// A rule whose bound passes the per-call limit, replayed with its floor capped at the limit
/// and its work at [`WORK_LIMIT`]: its value and floor where the replay ends under both, none
/// where it stops (the floor past the limit: cel-go's actual cost is too) or cannot say (a
/// step that fails, where cel-go may go on, or the work past its cap).
pub fn decide(expr: &IdedExpr, context: &Context<'_, '_>, self_value: &Value) -> Option<(ResolveResult, u64)> {
    let mut replay = Replay::new(PER_CALL_LIMIT, WORK_LIMIT);
    replay.vars.push((super::SELF, self_value.clone()));
    let value = replay.meter(expr, context)?;
    (!replay.capped).then_some((Ok(value), replay.floor))
}

/// A floor under cel-go's actual cost of `expr` evaluated in `context` (the module's doc says
/// how it is counted and why it is never more).
pub fn floor(expr: &IdedExpr, context: &Context<'_, '_>) -> u64 {
    let mut replay = Replay::new(u64::MAX, u64::MAX);
    replay.meter(expr, context);
    replay.floor
}

/// [`floor`] of a rule whose `self` is `self_value` (bound as it is, not read back from the
/// context).
fn floor_of_rule(expr: &IdedExpr, context: &Context<'_, '_>, self_value: &Value) -> u64 {
    let mut replay = Replay::new(u64::MAX, u64::MAX);
    replay.vars.push((super::SELF, self_value.clone()));
    replay.meter(expr, context);
    replay.floor
}

/// A replay of a rule, step by step: the floor of what it evaluated so far, the work that took,
/// and the caps past which it stops.
///
/// Each step asks the `cel` crate for its own value alone: the node copied with its operands
/// replaced by fresh identifiers bound, in an inner scope, to the values the replay computed
/// for them ([`Replay::own_step`]); the crate is never asked for a subtree's value, so the
/// replay evaluates each node once per time the rule's evaluation reaches it, however deep.
struct Replay<'e> {
    /// The variables the replay bound (`self`, the comprehensions'), innermost last: read as
    /// they are, where one of the context is copied out of it.
    vars: Vec<(&'e str, Value)>,
    /// cel-go's actual cost of what was replayed, at least.
    floor: u64,
    /// The work the replay did: one per node it visited and per iteration, plus the sizes of
    /// the values each step read or made ([`weight`]).
    work: u64,
    /// The floor past which the replay stops.
    floor_cap: u64,
    /// The work past which the replay stops.
    work_cap: u64,
    /// Whether it stopped at a cap: every value after that is unknown.
    capped: bool,
    /// The `?:` branch being replayed is a path: its root identifier is free.
    free_root: bool,
}

impl<'e> Replay<'e> {
    /// A replay that stops once its floor passes `floor_cap` or its work `work_cap`.
    fn new(floor_cap: u64, work_cap: u64) -> Replay<'e> {
        Replay {
            vars: Vec::new(),
            floor: 0,
            work: 0,
            floor_cap,
            work_cap,
            capped: false,
            free_root: false,
        }
    }

    /// Charges `floor` units of cel-go's cost and `work` units of work: false once past a cap.
    fn charge(&mut self, floor: u64, work: u64) -> bool {
        self.floor = self.floor.saturating_add(floor);
        self.work = self.work.saturating_add(work);
        if self.floor > self.floor_cap || self.work > self.work_cap {
            self.capped = true;
        }
        !self.capped
    }

    /// The value of `expr` (none where it fails, and where the replay stopped short), its floor
    /// and work charged.
    fn meter(&mut self, expr: &'e IdedExpr, context: &Context<'_, '_>) -> Option<Value> {
        if self.capped || !self.charge(0, 1) {
            return None;
        }
        match &expr.expr {
            Expr::Literal(_) => {
                let value = Value::resolve(expr, context).ok()?;
                self.charge(0, weight(&value)).then_some(value)
            }
            Expr::Ident(name) => {
                let cost = u64::from(!std::mem::take(&mut self.free_root));
                if !self.charge(cost, 0) {
                    return None;
                }
                if let Some((_, value)) = self.vars.iter().rev().find(|(n, _)| n == name) {
                    return Some(value.clone());
                }
                // Read out of the context, the value is copied.
                let value = Value::resolve(expr, context).ok()?;
                self.charge(0, weight(&value)).then_some(value)
            }
            Expr::Select(select) => {
                let operand = self.meter(&select.operand, context)?;
                if let Value::Map(map) = &operand {
                    let found = map.get(&KeyRef::String(&select.field));
                    match (select.test, found) {
                        (true, found) => return self.charge(0, 0).then_some(Value::Bool(found.is_some())),
                        (false, Some(value)) => {
                            let value = value.clone();
                            return self.charge(1, 0).then_some(value);
                        }
                        // No such key: the crate says so.
                        (false, None) => {}
                    }
                }
                let shallow = IdedExpr {
                    id: expr.id,
                    expr: Expr::Select(SelectExpr {
                        operand: Box::new(fresh(0, select.operand.id)),
                        field: select.field.clone(),
                        test: select.test,
                    }),
                };
                let value = self.own_step(&shallow, vec![operand], context)?;
                // `has()`: its presence test is free since cel-go's `PresenceTestHasCost(false)`.
                self.charge(u64::from(!select.test), 0).then_some(value)
            }
            Expr::Call(call) => self.call(expr, call, context),
            Expr::Comprehension(c) => self.comprehension(c, context),
            Expr::List(list) => {
                if is_constant(expr) {
                    return self.constant(expr, context);
                }
                let before = self.floor;
                let mut values = Vec::with_capacity(list.elements.len());
                for element in &list.elements {
                    match self.meter(element, context) {
                        Some(value) => values.push(value),
                        // cel-go stops there; the floor counts nothing of the list.
                        None => return self.undo(before),
                    }
                }
                let shallow = IdedExpr {
                    id: expr.id,
                    expr: Expr::List(ListExpr {
                        elements: (0..values.len()).map(|i| fresh(i, expr.id)).collect(),
                        optional_indices: list.optional_indices.clone(),
                    }),
                };
                match self.own_step(&shallow, values, context) {
                    Some(value) => self.charge(10, 0).then_some(value),
                    None => self.undo(before),
                }
            }
            Expr::Map(map) => {
                if is_constant(expr) {
                    return self.constant(expr, context);
                }
                let before = self.floor;
                let mut values = Vec::with_capacity(map.entries.len() * 2);
                let mut entries = Vec::with_capacity(map.entries.len());
                for entry in &map.entries {
                    let EntryExpr::MapEntry(e) = &entry.expr else {
                        return self.undo(before);
                    };
                    for part in [&e.key, &e.value] {
                        match self.meter(part, context) {
                            Some(value) => values.push(value),
                            None => return self.undo(before),
                        }
                    }
                    let at = values.len();
                    entries.push(IdedEntryExpr {
                        id: entry.id,
                        expr: EntryExpr::MapEntry(MapEntryExpr {
                            key: fresh(at - 2, e.key.id),
                            value: fresh(at - 1, e.value.id),
                            optional: e.optional,
                        }),
                    });
                }
                let shallow = IdedExpr {
                    id: expr.id,
                    expr: Expr::Map(MapExpr { entries }),
                };
                match self.own_step(&shallow, values, context) {
                    Some(value) => self.charge(30, 0).then_some(value),
                    None => self.undo(before),
                }
            }
            Expr::Struct(_) | Expr::Unspecified => None,
        }
    }

    /// Takes back what a list or map whose part failed was charged: none.
    fn undo(&mut self, before: u64) -> Option<Value> {
        self.floor = before;
        None
    }

    /// The value of a constant (cel-go's optimiser folds it: free), its size charged as work.
    fn constant(&mut self, expr: &IdedExpr, context: &Context<'_, '_>) -> Option<Value> {
        let value = Value::resolve(expr, context).ok()?;
        self.charge(0, weight(&value)).then_some(value)
    }

    /// The value of one step, `shallow`, whose operands are the fresh identifiers bound to
    /// `operands` in order, as the `cel` crate computes it; the operands and the value charged as
    /// work (the crate copies a value bound to a variable, and copies its answer out).
    fn own_step(&mut self, shallow: &IdedExpr, operands: Vec<Value>, context: &Context<'_, '_>) -> Option<Value> {
        let read = operands.iter().map(weight).fold(0, u64::saturating_add);
        if !self.charge(0, read) {
            return None;
        }
        let mut scope = context.new_inner_scope();
        for (i, value) in operands.into_iter().enumerate() {
            scope.add_variable_from_value(fresh_name(i), value);
        }
        let value = Value::resolve(shallow, &scope).ok()?;
        self.charge(0, weight(&value)).then_some(value)
    }

    /// The value of a call: its operands as cel-go evaluates them, and its own price.
    fn call(&mut self, expr: &'e IdedExpr, call: &'e CallExpr, context: &Context<'_, '_>) -> Option<Value> {
        let name = call.func_name.as_str();
        match (name, call.args.as_slice()) {
            // No cost of their own; the right-hand side runs only when the left does not decide.
            ("_&&_" | "_||_", [lhs, rhs]) if call.target.is_none() => {
                let go_on = name == "_&&_";
                return match self.meter(lhs, context)? {
                    Value::Bool(b) if b == go_on => match self.meter(rhs, context)? {
                        Value::Bool(b) => Some(Value::Bool(b)),
                        _ => None,
                    },
                    Value::Bool(b) => Some(Value::Bool(b)),
                    _ => None,
                };
            }
            ("_?_:_", [cond, truthy, falsy]) if call.target.is_none() => {
                let branch = match self.meter(cond, context)? {
                    Value::Bool(true) => truthy,
                    Value::Bool(false) => falsy,
                    _ => return None,
                };
                self.free_root = is_path(branch);
                let value = self.meter(branch, context);
                self.free_root = false;
                return value;
            }
            _ => {}
        }
        if is_constant(expr) {
            return self.constant(expr, context);
        }
        // A call on a name that is no variable (`format.uri()`) calls the function the name and
        // the function's make: the target is no operand.
        let namespaced = call
            .target
            .as_deref()
            .and_then(name_root)
            .is_some_and(|root| !self.vars.iter().any(|(n, _)| *n == root) && context.get_variable(root).is_none());
        let operands = call
            .target
            .as_deref()
            .filter(|_| !namespaced)
            .into_iter()
            .chain(&call.args);
        // Every operand runs, the target first; one that fails ends the call without its price.
        let mut values = Vec::with_capacity(call.args.len() + 1);
        for operand in operands {
            values.push(self.meter(operand, context)?);
        }
        let own = own_price(name, call.target.is_some() && !namespaced, call.args.last(), &values);
        let value = match operate(name, &values).or_else(|| index(name, &values)) {
            Some(value) => {
                let read = if name == "size" {
                    1
                } else {
                    values.iter().map(weight).min().unwrap_or(0)
                };
                if !self.charge(0, read) {
                    return None;
                }
                Some(value)
            }
            None => {
                let mut next = 0;
                let mut fresh_operand = |id: u64| {
                    next += 1;
                    fresh(next - 1, id)
                };
                let target = call.target.as_deref().map(|target| {
                    Box::new(if namespaced {
                        copy_name(target)
                    } else {
                        fresh_operand(target.id)
                    })
                });
                let args = call.args.iter().map(|arg| fresh_operand(arg.id)).collect();
                let shallow = IdedExpr {
                    id: expr.id,
                    expr: Expr::Call(CallExpr {
                        func_name: call.func_name.clone(),
                        target,
                        args,
                    }),
                };
                self.own_step(&shallow, values, context)
            }
        };
        // A call that fails is priced all the same (cel-go charges it, then the error).
        if !self.charge(own, 0) {
            return None;
        }
        value
    }

    /// The value of a comprehension, its loop run as cel-go's fold runs it.
    fn comprehension(&mut self, c: &'e ComprehensionExpr, context: &Context<'_, '_>) -> Option<Value> {
        let range = self.meter(&c.iter_range, context)?;
        let mut accu = self.meter(&c.accu_init, context)?;
        if !self.charge(0, len(&range)) {
            return None;
        }
        let items: Vec<(Value, Option<Value>)> = match (&range, &c.iter_var2) {
            (Value::List(list), None) => list.iter().map(|v| (v.clone(), None)).collect(),
            (Value::List(list), Some(_)) => list
                .iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), Some(v.clone())))
                .collect(),
            (Value::Map(map), None) => map.map.keys().map(|k| (Value::from(k), None)).collect(),
            (Value::Map(map), Some(_)) => map.map.iter().map(|(k, v)| (Value::from(k), Some(v.clone()))).collect(),
            _ => return None,
        };
        // One iteration's cost and outcome, kept for the next: an element equal to the last, with
        // the same accumulator, costs the same and ends the same (a list of equal elements is then
        // replayed in one step, not one per element).
        let mut last: Option<Iteration> = None;
        for item in items {
            if !self.charge(0, 1) {
                return None;
            }
            let reused = match &last {
                Some(last) => {
                    // Telling it apart reads the element, and the accumulator if they are equal.
                    let (repeats, read) = last.repeats(&accu, &item);
                    if !self.charge(0, read) {
                        return None;
                    }
                    repeats.then(|| (last.cost, last.next.clone()))
                }
                None => None,
            };
            let next = match reused {
                Some((cost, next)) => {
                    if !self.charge(cost, 0) {
                        return None;
                    }
                    next
                }
                None => {
                    let depth = self.vars.len();
                    self.vars.push((c.accu_var.as_str(), accu.clone()));
                    self.vars.push((c.iter_var.as_str(), item.0.clone()));
                    if let (Some(name), Some(value)) = (&c.iter_var2, &item.1) {
                        self.vars.push((name.as_str(), value.clone()));
                    }
                    let before = self.floor;
                    // Past a condition that is false the loop ends (`Some(None)`); past one that
                    // is not a boolean or a step that fails (cel-go goes on past an error; the
                    // floor does not) the comprehension's value is unknown (`None`).
                    let next = match self.meter(&c.loop_cond, context) {
                        Some(Value::Bool(true)) => self.meter(&c.loop_step, context).map(Some),
                        Some(Value::Bool(false)) => Some(None),
                        _ => None,
                    };
                    self.vars.truncate(depth);
                    if self.capped {
                        return None;
                    }
                    last = Some(Iteration {
                        accu: accu.clone(),
                        item: item.clone(),
                        cost: self.floor - before,
                        next: next.clone(),
                    });
                    next
                }
            };
            match next {
                Some(Some(next)) => accu = next,
                Some(None) => break,
                None => return None,
            }
        }
        let depth = self.vars.len();
        self.vars.push((c.accu_var.as_str(), accu));
        let value = self.meter(&c.result, context);
        self.vars.truncate(depth);
        value
    }
}

/// An index into a list or a map, as the `cel` crate answers it where it finds the entry
/// (none otherwise: the crate is asked, and says why).
fn index(name: &str, values: &[Value]) -> Option<Value> {
    match (name, values) {
        ("_[_]", [Value::List(list), Value::Int(i)]) => list.get(usize::try_from(*i).ok()?).cloned(),
        ("_[_]", [Value::List(list), Value::UInt(i)]) => list.get(usize::try_from(*i).ok()?).cloned(),
        ("_[_]", [Value::Map(map), Value::String(key)]) => map.get(&KeyRef::String(key)).cloned(),
        ("_[_]", [Value::Map(map), Value::Int(key)]) => map.get(&KeyRef::Int(*key)).cloned(),
        _ => None,
    }
}

/// The name of the `i`th fresh identifier a step's operand is bound to: no rule can spell it.
fn fresh_name(i: usize) -> String {
    format!("@syncguard{i}")
}

/// The `i`th fresh identifier, in place of the operand whose node is `id`.
fn fresh(i: usize, id: u64) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Ident(fresh_name(i)),
    }
}

/// The work of reading or making a value: a string's or byte string's length, a list's or
/// map's entries and everything within, 1 for anything else.
fn weight(value: &Value) -> u64 {
    match value {
        Value::String(s) => (s.len() as u64).max(1),
        Value::Bytes(b) => (b.len() as u64).max(1),
        Value::List(l) => l.iter().map(weight).fold(l.len() as u64 + 1, u64::saturating_add),
        Value::Map(m) => m
            .map
            .iter()
            .map(|(k, v)| weight(&Value::from(k)).saturating_add(weight(v)))
            .fold(m.map.len() as u64 + 1, u64::saturating_add),
        _ => 1,
    }
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

/// The first segment of a qualified name (`a` of `a.b.c`), none for any other expression.
fn name_root(expr: &IdedExpr) -> Option<&str> {
    match &expr.expr {
        Expr::Ident(name) => Some(name),
        Expr::Select(select) if !select.test => name_root(&select.operand),
        _ => None,
    }
}

/// A copy of a qualified name (`a.b.c`: an identifier, then field selections), the only
/// shape a call's namespace has.
fn copy_name(expr: &IdedExpr) -> IdedExpr {
    let copied = match &expr.expr {
        Expr::Select(select) => Expr::Select(SelectExpr {
            operand: Box::new(copy_name(&select.operand)),
            field: select.field.clone(),
            test: false,
        }),
        Expr::Ident(name) => Expr::Ident(name.clone()),
        _ => Expr::Unspecified,
    };
    IdedExpr {
        id: expr.id,
        expr: copied,
    }
}

/// A call's own price in cel-go's cost tracker, from its operands' values (the target first
/// where `method`); `last` is its last argument's expression.
fn own_price(name: &str, method: bool, last: Option<&IdedExpr>, values: &[Value]) -> u64 {
    match (name, values) {
        // A membership test in a list of constants is a set lookup once optimised.
        ("@in", [_, _]) if last.is_some_and(is_constant) => 0,
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
        ("matches", [Value::String(s), Value::String(re)]) if method => {
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
        // Kubernetes' library functions whose price `library/cost.go` (`CallCost`) sets by the
        // string they read, by name whatever the overload: a tenth of its length, rounded up
        // (twice that for `replace` and `split`, which build their result).
        (
            "lowerAscii" | "upperAscii" | "trim" | "substring" | "url" | "quantity" | "isQuantity" | "semver"
            | "isSemver" | "cidr" | "isIP" | "isCIDR" | "ip",
            [Value::String(s), ..],
        ) => traversal(size_of_str(s)),
        ("replace" | "split", [Value::String(s), ..]) => size_of_str(s).saturating_mul(2).div_ceil(10),
        ("find" | "findAll", [Value::String(s), Value::String(re), ..]) => {
            traversal(size_of_str(s).saturating_add(1)).saturating_mul(size_of_str(re).div_ceil(4))
        }
        // A format's check: as a regular expression of the format's `MaxRegexSize` would cost.
        ("validate", [Value::Opaque(format), Value::String(s)]) => {
            match format.downcast_ref::<super::format::NamedFormat>() {
                Some(format) => traversal(size_of_str(s).saturating_add(1))
                    .saturating_mul(super::format::max_regex_size(format.name()).div_ceil(4)),
                None => 0,
            }
        }
        // The other functions of Kubernetes' libraries and of the extensions: maybe 0.
        _ => 0,
    }
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

/// Whether two values are the same to every operation a rule can apply, so that an iteration
/// over one may stand for an iteration over the other: of the same kind at every depth (`1` is
/// not `1u` nor `1.0`, also inside lists and maps, where the `cel` crate's `==` says they are
/// equal), floats bit for bit (`0.0` is not `-0.0`: `1.0 / x` tells them apart), timestamps at the
/// same instant and offset (`getHours()` reads the offset). Anything else (a function, an opaque
/// value other than an optional, a struct) is never the same: its iteration is replayed again.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Float(x), Value::Float(y)) => x.to_bits() == y.to_bits(),
        (Value::List(x), Value::List(y)) => x.len() == y.len() && x.iter().zip(y.iter()).all(|(x, y)| same(x, y)),
        (Value::Map(x), Value::Map(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(key, value)| y.map.get(key).is_some_and(|other| same(value, other)))
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y && x.offset() == y.offset(),
        (Value::Opaque(x), Value::Opaque(y)) => {
            match (x.downcast_ref::<OptionalValue>(), y.downcast_ref::<OptionalValue>()) {
                (Some(x), Some(y)) => match (x.value(), y.value()) {
                    (Some(x), Some(y)) => same(x, y),
                    (None, None) => true,
                    _ => false,
                },
                _ => false,
            }
        }
        (Value::Int(_), Value::Int(_))
        | (Value::UInt(_), Value::UInt(_))
        | (Value::String(_), Value::String(_))
        | (Value::Bytes(_), Value::Bytes(_))
        | (Value::Bool(_), Value::Bool(_))
        | (Value::Duration(_), Value::Duration(_))
        | (Value::Null, Value::Null) => a == b,
        _ => false,
    }
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
    /// Whether an iteration from `accu` over `item` is this one again, and the work of telling
    /// (the element compared, then the accumulator only if the elements are the same).
    fn repeats(&self, accu: &Value, item: &(Value, Option<Value>)) -> (bool, u64) {
        let same_item = same(&self.item.0, &item.0)
            && match (&self.item.1, &item.1) {
                (Some(a), Some(b)) => same(a, b),
                (None, None) => true,
                _ => false,
            };
        let read = weight(&item.0).saturating_add(item.1.as_ref().map_or(0, weight));
        if !same_item {
            return (false, read);
        }
        (same(&self.accu, accu), read.saturating_add(weight(accu)))
    }
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
