//! A lower bound of the estimated cost the API server gives a CRD's rule when it validates the
//! CRD: cel-go's checker cost estimator (`checker/cost.go`, cel-go 0.26) over the rule, with the
//! sizes Kubernetes' size estimator gives (`apiextensions-apiserver/pkg/apiserver/schema/cel/
//! compilation.go`'s `sizeEstimator`: a path's `MaxElements` in the schema's `DeclType`, from
//! `k8s.io/apiserver/pkg/cel/common/schemas.go`: `maxItems`, `maxProperties`, `maxLength` times
//! 4, else what a 3 MiB request holds of the smallest serialized element), multiplied by how many
//! times the rule may run (`getExpressionCost` in validation.go: the product of the `maxItems`
//! and `maxProperties` above it, else what a request holds of the node's smallest value).
//!
//! Not a port of the whole estimator: only what is certain is counted, so the bound never
//! exceeds the API server's estimate. An identifier costs 1 (`selectAndIdentCost`), a literal 0,
//! a call at least its arguments (`&&` and `||` both sides, a conditional its condition and the
//! cheaper branch), an `==` or `!=` of two strings a tenth of the shorter's size
//! (`StringTraversalCostFactor`), and a comprehension (`all`, `exists`, `exists_one`, `map`,
//! `filter`) its range, start and result plus, for each element the range's size allows, its
//! step and condition. Everything else (a field selection's own cost, the functions' prices, the
//! sizes of values not read along a path from `self`) counts 0. The check says a rule's cost
//! only where the bound alone exceeds the limit a hundredfold: the API server then says "more
//! than 100x", whatever its exact estimate.

use crate::json::{Node, Number};
use cel::Program;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

/// `StaticEstimatedCostLimit`: the largest estimated cost of one rule.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;

/// `celconfig.MaxRequestSizeBytes`.
const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// A non-negative count keyword (`maxItems`...), negative ones as 0 (`zeroIfNegative`).
fn count(schema: &Node<'_>, key: &str) -> Option<u64> {
    match schema.get(key)?.number()? {
        Number::U64(n) => Some(n),
        Number::I64(_) => Some(0),
        Number::F64(_) => None,
    }
}

/// A schema's `type`.
fn type_of<'n>(schema: &'n Node<'_>) -> &'n str {
    schema.get("type").and_then(Node::as_str).unwrap_or("")
}

/// Whether a flag keyword is true.
fn flag(schema: &Node<'_>, key: &str) -> bool {
    schema.get(key).and_then(Node::as_bool) == Some(true)
}

/// The schema of a map's values, when the schema is a map (`additionalProperties` a schema).
fn map_values<'n, 'j>(schema: &'n Node<'j>) -> Option<&'n Node<'j>> {
    if type_of(schema) != "object" {
        return None;
    }
    schema
        .get("additionalProperties")
        .filter(|v| matches!(v, Node::Object(_)))
}

/// A plain string schema (no `format` CEL reads as another type).
fn plain_string(schema: &Node<'_>) -> bool {
    type_of(schema) == "string"
        && !flag(schema, "x-kubernetes-int-or-string")
        && !matches!(
            schema.get("format").and_then(Node::as_str),
            Some("byte" | "duration" | "date" | "date-time")
        )
}

/// The `MinSerializedSize` of the schema's `DeclType`, or more (a larger size bounds the counts
/// from below); none when not known here.
pub fn min_size(schema: &Node<'_>) -> Option<u64> {
    if flag(schema, "x-kubernetes-int-or-string") {
        return Some(1);
    }
    match type_of(schema) {
        "array" => Some(2),
        "object" if map_values(schema).is_some() => Some(2),
        "object" => {
            let required: Vec<&str> = match schema.get("required") {
                Some(Node::Array(names)) => names.iter().filter_map(Node::as_str).collect(),
                _ => Vec::new(),
            };
            let mut size = 2u64;
            if let Some(properties) = schema.get("properties").and_then(Node::as_object) {
                for (name, property) in properties {
                    if required.contains(&name.as_ref()) && property.get("default").is_none_or(Node::is_null) {
                        size = size.saturating_add(name.len() as u64 + min_size(property)? + 4);
                    }
                }
            }
            Some(size)
        }
        "string" if plain_string(schema) => Some(2),
        "boolean" => Some(4),
        "integer" | "number" => Some(1),
        _ => None,
    }
}

/// The `MaxElements` of the schema's `DeclType` (a list's items, a map's entries, a string's
/// bytes), or less; none when not known here.
pub fn max_elements(schema: &Node<'_>) -> Option<u64> {
    let per_request = MAX_REQUEST_SIZE_BYTES - 2;
    if flag(schema, "x-kubernetes-int-or-string") {
        return Some(count(schema, "maxLength").map_or(per_request, |n| n.saturating_mul(4)));
    }
    match type_of(schema) {
        "array" => match count(schema, "maxItems") {
            Some(n) => Some(n),
            None => Some(per_request / (min_size(schema.get("items")?)? + 1)),
        },
        "object" => {
            let values = map_values(schema)?;
            match count(schema, "maxProperties") {
                Some(n) => Some(n),
                None => Some(per_request / (min_size(values)? + 6)),
            }
        }
        "string" if plain_string(schema) => {
            if let Some(n) = count(schema, "maxLength") {
                return Some(n.saturating_mul(4));
            }
            match schema.get("enum") {
                Some(Node::Array(values)) if !values.is_empty() => Some(
                    values
                        .iter()
                        .filter_map(Node::as_str)
                        .map(|v| v.len() as u64)
                        .max()
                        .unwrap_or(0),
                ),
                _ => Some(per_request),
            }
        }
        _ => None,
    }
}

/// How many times a node's rules may run (`maxCardinality` of its `MinSerializedSize`), when a
/// list or map above it is unbounded; 1 when its size is not known here.
pub fn unbounded_cardinality(schema: &Node<'_>) -> u64 {
    min_size(schema).map_or(1, |size| MAX_REQUEST_SIZE_BYTES / (size + 1))
}

/// What a node contributes to the count of its children's runs (`extractMaxElements`): none
/// when unbounded.
pub fn max_children(schema: &Node<'_>) -> Option<u64> {
    match type_of(schema) {
        "object" if schema.get("additionalProperties").is_some_and(|a| !a.is_null()) => count(schema, "maxProperties"),
        "array" => count(schema, "maxItems"),
        _ => Some(1),
    }
}

/// A value on the estimator's walk: its cost's lower bound, the schema it reads when it is a
/// path from `self`, and its size when it is a string literal.
struct Value<'n, 'j> {
    cost: u64,
    schema: Option<&'n Node<'j>>,
    literal_len: Option<u64>,
    /// Whether it is an iteration variable, or an entry of one.
    iterated: bool,
}

impl Value<'_, '_> {
    /// A value costing `cost`, of no known schema.
    fn cost(cost: u64) -> Self {
        Value {
            cost,
            schema: None,
            literal_len: None,
            iterated: false,
        }
    }

    /// The size of a string value, when known.
    fn string_size(&self) -> Option<u64> {
        self.literal_len
            .or_else(|| self.schema.filter(|s| plain_string(s)).and_then(max_elements))
    }
}

/// A lower bound of the rule's estimated cost (`EstimateCost(...).Max`) for a node of `schema`.
pub fn lower_bound(program: &Program, schema: &Node<'_>) -> u64 {
    let mut scope = vec![
        ("self".to_owned(), Some(schema), false),
        ("oldSelf".to_owned(), Some(schema), false),
    ];
    walk(program.expression(), &mut scope).cost
}

/// The bound of one expression.
fn walk<'n, 'j>(expr: &IdedExpr, scope: &mut Vec<(String, Option<&'n Node<'j>>, bool)>) -> Value<'n, 'j> {
    match &expr.expr {
        Expr::Literal(LiteralValue::String(s)) => Value {
            cost: 0,
            schema: None,
            // cel-go sizes a string in runes.
            literal_len: Some(s.chars().count() as u64),
            iterated: false,
        },
        Expr::Literal(_) | Expr::Unspecified | Expr::Struct(_) => Value::cost(0),
        Expr::Ident(name) => {
            let found = scope.iter().rev().find(|(n, ..)| n == name);
            Value {
                cost: 1,
                schema: found.and_then(|(_, s, _)| *s),
                literal_len: None,
                iterated: found.is_some_and(|(.., iterated)| *iterated),
            }
        }
        Expr::Select(select) => {
            let operand = walk(&select.operand, scope);
            // A field of an iteration variable is not sized: cel-go's estimator extends an
            // iteration variable's path in place (`getPath` shares its backing array), so one
            // selection on it may overwrite another's path and give a nested loop or a
            // comparison a smaller size than the schema's (a review found the API server
            // accepting `self.L.all(x, x.inner.all(y, y == x.s))`, which the schema puts past
            // 100x).
            let schema = if select.test || operand.iterated {
                None
            } else {
                operand
                    .schema
                    .filter(|s| type_of(s) == "object")
                    .and_then(|s| s.get("properties"))
                    .and_then(|p| p.get(&select.field))
            };
            Value {
                cost: operand.cost,
                schema,
                literal_len: None,
                iterated: false,
            }
        }
        Expr::Call(call) => {
            let target = call.target.as_ref().map(|t| walk(t, scope));
            let args: Vec<Value<'n, 'j>> = call.args.iter().map(|a| walk(a, scope)).collect();
            let sum = args
                .iter()
                .chain(target.as_ref())
                .fold(0u64, |sum, v| sum.saturating_add(v.cost));
            match (call.func_name.as_str(), call.target.is_none(), args.as_slice()) {
                ("_?_:_", true, [condition, yes, no]) => {
                    Value::cost(condition.cost.saturating_add(yes.cost.min(no.cost)))
                }
                ("_==_" | "_!=_", true, [a, b]) => {
                    let traversal = match (a.string_size(), b.string_size()) {
                        (Some(a), Some(b)) => a.min(b) / 10,
                        _ => 0,
                    };
                    Value::cost(sum.saturating_add(traversal))
                }
                ("_[_]", true, [container, _]) => Value {
                    cost: sum,
                    schema: container
                        .schema
                        .filter(|_| !container.iterated)
                        .and_then(|s| match type_of(s) {
                            "array" => s.get("items"),
                            _ => map_values(s),
                        }),
                    literal_len: None,
                    iterated: false,
                },
                _ => Value::cost(sum),
            }
        }
        Expr::List(list) => Value::cost(
            list.elements
                .iter()
                .fold(0u64, |sum, e| sum.saturating_add(walk(e, scope).cost)),
        ),
        Expr::Map(map) => {
            let mut sum = 0u64;
            for entry in &map.entries {
                if let EntryExpr::MapEntry(e) = &entry.expr {
                    sum = sum
                        .saturating_add(walk(&e.key, scope).cost)
                        .saturating_add(walk(&e.value, scope).cost);
                }
            }
            Value::cost(sum)
        }
        Expr::Comprehension(c) => {
            let range = walk(&c.iter_range, scope);
            let init = walk(&c.accu_init, scope);
            let size = match (&c.iter_range.expr, range.schema) {
                (Expr::List(list), _) => list.elements.len() as u64,
                (_, Some(schema)) if matches!(type_of(schema), "array" | "object") => max_elements(schema).unwrap_or(0),
                _ => 0,
            };
            let element = match (range.schema, &c.iter_var2) {
                (Some(schema), None) if type_of(schema) == "array" => schema.get("items"),
                _ => None,
            };
            let depth = scope.len();
            scope.push((c.accu_var.clone(), None, false));
            scope.push((c.iter_var.clone(), element, true));
            if let Some(second) = &c.iter_var2 {
                scope.push((second.clone(), None, true));
            }
            let condition = walk(&c.loop_cond, scope);
            let step = walk(&c.loop_step, scope);
            scope.truncate(depth + 1);
            let result = walk(&c.result, scope);
            scope.truncate(depth);
            let per_element = condition.cost.saturating_add(step.cost);
            Value::cost(
                range
                    .cost
                    .saturating_add(init.cost)
                    .saturating_add(result.cost)
                    .saturating_add(size.saturating_mul(per_element)),
            )
        }
    }
}
