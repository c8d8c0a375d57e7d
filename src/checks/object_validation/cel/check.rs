//! What the API server checks when it compiles a rule, and its words for what goes wrong.
//!
//! The API server type-checks a rule against the schema with cel-go's checker; the `cel` crate
//! has no checker, so the checks that catch the rules real CRDs get wrong are written here by
//! hand: a syntax error, a reference to an undeclared variable, a field the schema does not
//! declare on the path from `self` (or a comprehension over it), and a rule whose result
//! cannot be a boolean (a message expression: a string). Type errors inside a rule that
//! cel-go's checker finds and these do not surface when the rule runs, as the API server's
//! own runtime errors.

use super::escaping::escape;
use super::{OLD_SELF, SELF, SchemaView, env, library};
use crate::checks::object_validation::field_error::go_json;
use crate::json::Node;
use cel::common::ast::{Expr, IdedExpr, LiteralValue};
use cel::{ExecutionError, Program, Value};

/// What an expression must evaluate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Want {
    /// A rule: a boolean.
    Bool,
    /// A message expression: a string.
    String,
}

/// Why a rule does not compile: the API server's detail, and whether the API server certainly
/// refuses the rule with it (a parse error of the `cel` crate, or an undeclared name that is the
/// target of a call, which could be a namespace of functions the crate does not know, is not).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The detail (`compilation failed: ERROR: <input>:1:6: ...`).
    pub detail: String,
    /// Whether cel-go's checker refuses the rule with this detail.
    pub certain: bool,
}

/// Compiles `source` for a node of `schema`, with the API server's error detail on failure
/// (`compilation failed: ERROR: <input>:1:6: ...`).
pub fn compile<'s, S: SchemaView<'s>>(source: &str, schema: S, want: Want, minor: u32) -> Result<Program, String> {
    compile_judged(source, schema, want, minor).map_err(|failure| failure.detail)
}

/// [`compile`], saying whether a failure is certain ([`Failure`]).
pub fn compile_judged<'s, S: SchemaView<'s>>(
    source: &str,
    schema: S,
    want: Want,
    minor: u32,
) -> Result<Program, Failure> {
    let program = env().compile(source).map_err(|errors| {
        // The `cel` crate's parser is generated from cel-go's grammar: its syntax errors and
        // macro errors are cel-go's, word for word (kubectl-validate, Kubernetes 1.35, on the
        // CRD tests' rules), but for `unsupported syntax`, placed elsewhere.
        let certain = !errors.errors.iter().any(|e| e.msg.starts_with("unsupported syntax"));
        let text = errors
            .errors
            .iter()
            .map(|e| {
                let line = usize::try_from(e.pos.0).unwrap_or(1).max(1);
                // The `cel` crate counts columns from 1, cel-go's `<input>:1:N` from 0 before adding 1.
                let column = usize::try_from(e.pos.1).unwrap_or(0).saturating_sub(1);
                located(source, line, column, &e.msg)
            })
            .collect::<Vec<_>>()
            .join("\n");
        Failure {
            detail: format!("compilation failed: {text}"),
            certain,
        }
    })?;
    let mut issues = Vec::new();
    let mut checker = Checker {
        source,
        program: &program,
        minor,
        issues: &mut issues,
        uncertain: false,
    };
    let mut scope = vec![
        (SELF.to_owned(), Some(Typed::Schema(schema))),
        (OLD_SELF.to_owned(), Some(Typed::Schema(schema))),
    ];
    let root = checker.visit(program.expression(), &mut scope);
    let certain = !checker.uncertain;
    if !issues.is_empty() {
        return Err(Failure {
            detail: format!("compilation failed: {}", issues.join("\n")),
            certain,
        });
    }
    let kind = result_kind(&program.expression().expr).or_else(|| match root {
        Some(Typed::Schema(s)) if !s.int_or_string() => match s.type_name() {
            Some("boolean") => Some("bool"),
            Some("string") if !matches!(s.format(), Some("byte" | "date" | "date-time" | "duration")) => Some("string"),
            Some("string" | "integer" | "number" | "object" | "array") => Some("other"),
            _ => None,
        },
        _ => None,
    });
    let failure = |detail: &str| {
        Err(Failure {
            detail: detail.to_owned(),
            certain: true,
        })
    };
    match (want, kind) {
        (Want::Bool, Some(kind)) if kind != "bool" => failure("cel expression must evaluate to a bool"),
        (Want::String, Some(kind)) if kind != "string" => failure("must evaluate to a string"),
        _ => Ok(program),
    }
}

/// cel-go's error text: `ERROR: <input>:<line>:<column+1>: <message>`, the line, and a caret
/// under the column.
fn located(source: &str, line: usize, column: usize, message: &str) -> String {
    let snippet = source.lines().nth(line - 1).unwrap_or("");
    format!(
        "ERROR: <input>:{line}:{}: {message}\n | {snippet}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

/// The type of a value as far as the checker follows it.
#[derive(Clone, Copy)]
enum Typed<S> {
    /// A value of this schema node.
    Schema(S),
}

/// Walks a rule's tree, noting what the API server's checker would refuse.
struct Checker<'a> {
    source: &'a str,
    program: &'a Program,
    /// The Kubernetes minor whose libraries the rule may call.
    minor: u32,
    issues: &'a mut Vec<String>,
    /// An issue cel-go may word otherwise was noted (an undeclared call target).
    uncertain: bool,
}

/// The names a rule may use without declaring them: types and namespaces of functions.
const GLOBALS: [&str; 16] = [
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
    "duration",
    "timestamp",
    "dyn",
    "optional",
    "strings",
    "math",
];

impl<'a> Checker<'a> {
    /// Notes an issue at `expr`'s position.
    fn issue(&mut self, expr: &IdedExpr, message: String) {
        let (line, column) = match self.program.source_info().offset_for(expr.id) {
            Some((start, _)) => position(self.source, start as usize),
            None => (1, 0),
        };
        self.issues.push(located(self.source, line, column, &message));
    }

    /// The type of `expr` where it is a path from a typed variable, noting an undefined field.
    fn visit<'s, S: SchemaView<'s>>(
        &mut self,
        expr: &IdedExpr,
        scope: &mut Vec<(String, Option<Typed<S>>)>,
    ) -> Option<Typed<S>> {
        match &expr.expr {
            Expr::Ident(name) => match scope.iter().rev().find(|(n, _)| n == name) {
                Some((_, typed)) => *typed,
                None => {
                    if !GLOBALS.contains(&name.as_str()) && !name.starts_with('@') && !name.starts_with("__") {
                        self.issue(expr, format!("undeclared reference to '{name}' (in container '')"));
                    }
                    None
                }
            },
            Expr::Select(select) => {
                let operand = self.visit(&select.operand, scope);
                let Some(Typed::Schema(schema)) = operand else {
                    return None;
                };
                let typed = field(schema, &select.field).map_or_else(
                    || {
                        if declares_fields(schema) {
                            self.issue(expr, format!("undefined field '{}'", select.field));
                        }
                        None
                    },
                    |s| Some(Typed::Schema(s)),
                );
                // `has(self.x)` is a bool, whatever the field's type.
                if select.test { None } else { typed }
            }
            Expr::Call(call) => {
                // A two-variable comprehension (`self.l.all(i, x, ...)`, cel-go's
                // ext.TwoVarComprehensions), which the `cel` crate reads as a call, and `reverse`
                // (the lists library's, which Kubernetes enables, or the strings library's, which
                // it does not): the rule is still not compiled here (its custom resources get
                // `unreadableSchema`), but the API server's words for it are not known, so it is
                // not refused at the CRD.
                let two_variables = call.target.is_some()
                    && call.args.len() == 3
                    && call.args[..2].iter().all(|a| matches!(a.expr, Expr::Ident(_)))
                    && matches!(
                        call.func_name.as_str(),
                        "all"
                            | "exists"
                            | "existsOne"
                            | "exists_one"
                            | "transformList"
                            | "transformMap"
                            | "transformMapEntry"
                    );
                if two_variables || call.func_name == "reverse" {
                    self.uncertain = true;
                }
                // A namespaced function (`format.named(...)`, `sets.contains(...)`): its target
                // is the namespace, not a variable. cel-go looks the qualified name up first;
                // without it (an older minor) it checks the target as a variable and then the
                // bare function name, undeclared both.
                let qualified = match call.target.as_deref().map(|t| &t.expr) {
                    Some(Expr::Ident(namespace)) if !scope.iter().any(|(n, _)| n == namespace) => {
                        library::introduced(&format!("{namespace}.{}", call.func_name))
                    }
                    _ => None,
                };
                if let Some(since) = qualified {
                    if since <= self.minor {
                        for arg in &call.args {
                            self.visit(arg, scope);
                        }
                        return None;
                    }
                    if let Some(target) = &call.target {
                        self.visit(target, scope);
                    }
                    for arg in &call.args {
                        self.visit(arg, scope);
                    }
                    self.issue(
                        expr,
                        format!("undeclared reference to '{}' (in container '')", call.func_name),
                    );
                    return None;
                }
                if library::introduced(&call.func_name).is_some_and(|since| since > self.minor) {
                    self.issue(
                        expr,
                        format!("undeclared reference to '{}' (in container '')", call.func_name),
                    );
                }
                // An undeclared target of a call may be a namespace of functions the `cel` crate
                // does not know (cel-go then words its errors otherwise).
                if let Some(Expr::Ident(name)) = call.target.as_deref().map(|t| &t.expr)
                    && !scope.iter().any(|(n, _)| n == name)
                {
                    self.uncertain = true;
                }
                let target = call.target.as_ref().map(|t| self.visit(t, scope));
                let args: Vec<_> = call.args.iter().map(|a| self.visit(a, scope)).collect();
                if call.func_name == "_[_]"
                    && call.target.is_none()
                    && let Some(Some(Typed::Schema(schema))) = args.first()
                {
                    return element(*schema).map(Typed::Schema);
                }
                let _ = target;
                None
            }
            Expr::Comprehension(c) => {
                // Two-variable comprehensions: cel-go's ext.TwoVarComprehensions, 1.32.
                if c.iter_var2.is_some() && self.minor < 32 {
                    self.issue(expr, "undeclared reference to 'all' (in container '')".to_owned());
                }
                let range = self.visit(&c.iter_range, scope);
                self.visit(&c.accu_init, scope);
                let item = match range {
                    Some(Typed::Schema(schema)) => match schema.type_name() {
                        Some("array") => schema.items().map(Typed::Schema),
                        _ => None,
                    },
                    None => None,
                };
                let depth = scope.len();
                scope.push((c.iter_var.clone(), item));
                if let Some(second) = &c.iter_var2 {
                    scope.push((second.clone(), None));
                }
                scope.push((c.accu_var.clone(), None));
                self.visit(&c.loop_cond, scope);
                self.visit(&c.loop_step, scope);
                scope.truncate(depth);
                scope.push((c.accu_var.clone(), None));
                self.visit(&c.result, scope);
                scope.truncate(depth);
                None
            }
            Expr::List(list) => {
                for e in &list.elements {
                    self.visit(e, scope);
                }
                None
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let cel::common::ast::EntryExpr::MapEntry(e) = &entry.expr {
                        self.visit(&e.key, scope);
                        self.visit(&e.value, scope);
                    }
                }
                None
            }
            Expr::Struct(_) | Expr::Literal(_) | Expr::Unspecified => None,
        }
    }
}

/// The schema of field `name` (as a rule spells it, escaped) of a value of `schema`.
fn field<'s, S: SchemaView<'s>>(schema: S, name: &str) -> Option<S> {
    if schema.type_name() != Some("object") {
        return None;
    }
    if schema.has_properties() {
        // The property whose escaped name is `name`: unescaping is not needed, as every
        // escaped form is tried by the value's own name.
        if let Some(s) = schema.property(name).filter(|_| escape(name).as_deref() == Some(name)) {
            return Some(s);
        }
        return unescaped(name).and_then(|n| schema.property(&n));
    }
    schema.additional_properties()
}

/// Whether the checker knows every field of a value of `schema` (an object with properties or
/// an embedded resource, not a map or a value of any fields).
fn declares_fields<'s, S: SchemaView<'s>>(schema: S) -> bool {
    schema.type_name() == Some("object")
        && schema.has_properties()
        && !schema.embedded_resource()
        && !schema.preserve_unknown_fields()
}

/// The schema of an element (or a map's value) of a value of `schema`.
fn element<'s, S: SchemaView<'s>>(schema: S) -> Option<S> {
    match schema.type_name() {
        Some("array") => schema.items(),
        Some("object") if !schema.has_properties() => schema.additional_properties(),
        _ => None,
    }
}

/// The property name an escaped CEL field name stands for (`k8s.io/apiserver/pkg/cel`'s
/// `Unescape`).
fn unescaped(name: &str) -> Option<String> {
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(start) = rest.find("__") {
        let after = &rest[start + 2..];
        let Some(end) = after.find("__") else { break };
        let word = &after[..end];
        if word.is_empty() || word.contains('_') {
            out.push_str(&rest[..start + 1]);
            rest = &rest[start + 1..];
            continue;
        }
        out.push_str(&rest[..start]);
        match word {
            "underscores" => out.push_str("__"),
            "dot" => out.push('.'),
            "dash" => out.push('-'),
            "slash" => out.push('/'),
            w if escape(w).as_deref() == Some(&format!("__{w}__")) => out.push_str(w),
            _ => return None,
        }
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    Some(out)
}

/// The line (1-based) and column (0-based, in characters) of byte `offset` of `source`.
fn position(source: &str, offset: usize) -> (usize, usize) {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count())
}

/// The CEL type a rule's top expression certainly has, when its form says (a literal, a list
/// or map, arithmetic, `size`, a string function).
fn result_kind(expr: &Expr) -> Option<&'static str> {
    match expr {
        Expr::Literal(LiteralValue::Boolean(_)) => Some("bool"),
        Expr::Literal(LiteralValue::String(_)) => Some("string"),
        Expr::Literal(LiteralValue::Int(_)) => Some("int"),
        Expr::Literal(LiteralValue::UInt(_)) => Some("uint"),
        Expr::Literal(LiteralValue::Double(_)) => Some("double"),
        Expr::Literal(LiteralValue::Bytes(_)) => Some("bytes"),
        Expr::Literal(LiteralValue::Null) => Some("null_type"),
        Expr::List(_) => Some("list"),
        Expr::Map(_) => Some("map"),
        Expr::Call(call) => match call.func_name.as_str() {
            "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" | "_&&_" | "_||_" | "!_" | "@in" | "matches"
            | "startsWith" | "endsWith" | "contains" => Some("bool"),
            "_-_" | "_*_" | "_/_" | "_%_" | "size" => match call.func_name.as_str() {
                "size" => Some("int"),
                _ => None,
            },
            "lowerAscii" | "upperAscii" | "trim" | "replace" | "substring" | "join" | "format" | "charAt" => {
                Some("string")
            }
            _ => None,
        },
        _ => None,
    }
}

/// A `fieldPath` normalised as the API server's `ValidFieldPath` does (`.a['b.c']` is `a.b.c`,
/// a map's key is `[key]`), or `None` when it does not name a field of `schema`.
pub fn field_path<'s, S: SchemaView<'s>>(path: &str, schema: S) -> Option<String> {
    let mut out = String::new();
    let mut schema = schema;
    let mut rest = path;
    while !rest.is_empty() {
        let (name, quoted, after) = if let Some(r) = rest.strip_prefix('.') {
            let end = r.find(['.', '[', ']']).unwrap_or(r.len());
            if end == 0 {
                return None;
            }
            (r[..end].to_owned(), false, &r[end..])
        } else if let Some(r) = rest.strip_prefix("['") {
            let mut end = None;
            let bytes = r.as_bytes();
            for i in 0..bytes.len() {
                if bytes[i] == b'\'' && (i == 0 || bytes[i - 1] != b'\\') {
                    end = Some(i);
                    break;
                }
            }
            let end = end?;
            let after = r[end + 1..].strip_prefix(']')?;
            (unescape_single_quote(&r[..end])?, true, after)
        } else {
            return None;
        };
        let _ = quoted;
        if schema.has_properties() {
            schema = schema.property(&name)?;
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
        } else if let Some(values) = schema.additional_properties() {
            schema = values;
            out.push('[');
            out.push_str(&name);
            out.push(']');
        } else {
            return None;
        }
        rest = after;
    }
    Some(out)
}

/// A single-quoted string's escapes, as the API server reads them (`unescapeSingleQuote`).
fn unescape_single_quote(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(simple_escape(chars.next()?)?);
    }
    Some(out)
}

/// What Go's `strconv` reads `\c` as in a single-quoted string, for the one-letter escapes (`\n`,
/// `\'`, `\\`...); none for any other.
pub fn simple_escape(c: char) -> Option<char> {
    Some(match c {
        'a' => '\x07',
        'b' => '\x08',
        'f' => '\x0c',
        'n' => '\n',
        'r' => '\r',
        't' => '\t',
        'v' => '\x0b',
        '\'' => '\'',
        '\\' => '\\',
        _ => return None,
    })
}

/// A rule as the API server shows it in a CRD error: `encoding/json`'s form of the internal
/// `apiextensions.ValidationRule`, which has no JSON tags, so every field under its Go name
/// (`{"Rule":"self.a \u003c 5","Message":"","MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}`,
/// as kubectl-validate's Kubernetes 1.35 prints it).
pub fn rule_json(rule: &Node<'_>) -> String {
    let string = |key: &str| go_json(&Node::Str(rule.get(key).and_then(Node::as_str).unwrap_or("").into()));
    let reason = match rule.get("reason").and_then(Node::as_str) {
        Some(reason) => go_json(&Node::Str(reason.into())),
        None => "null".to_owned(),
    };
    let optional_old_self = match rule.get("optionalOldSelf").and_then(Node::as_bool) {
        Some(b) => b.to_string(),
        None => "null".to_owned(),
    };
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{reason},\"FieldPath\":{},\"OptionalOldSelf\":{optional_old_self}}}",
        string("rule"),
        string("message"),
        string("messageExpression"),
        string("fieldPath"),
    )
}

/// An evaluation error in cel-go's words (`no such key: x`, `no such overload`, `division by
/// zero`, ...).
pub fn error_text(error: &ExecutionError) -> String {
    match error {
        ExecutionError::NoSuchKey(key) => format!("no such key: {key}"),
        ExecutionError::NoSuchOverload(_)
        | ExecutionError::UnsupportedBinaryOperator(..)
        | ExecutionError::ValuesNotComparable(..)
        | ExecutionError::UnexpectedType { .. }
        | ExecutionError::UnsupportedTargetType { .. }
        | ExecutionError::NotSupportedAsMethod { .. } => "no such overload".to_owned(),
        ExecutionError::DivisionByZero(_) => "division by zero".to_owned(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".to_owned(),
        ExecutionError::Overflow(..) => "integer overflow".to_owned(),
        ExecutionError::IndexOutOfBounds(index) => format!("index out of bounds: {}", show(index)),
        ExecutionError::UndeclaredReference(name) => format!("no such attribute(s): {name}"),
        ExecutionError::FunctionError { message, .. } => message.clone(),
        other => other.to_string(),
    }
}

/// A value as cel-go prints it in an error.
fn show(value: &Value) -> String {
    match value {
        Value::Int(i) => i.to_string(),
        Value::UInt(u) => u.to_string(),
        Value::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// The error of a rule that evaluated to something other than a boolean (a rule of dynamic
/// type, which the checker could not refuse).
pub fn no_such_overload_text(_value: &Value) -> String {
    "no such overload".to_owned()
}
