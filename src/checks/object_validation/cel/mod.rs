//! CEL validation rules (`x-kubernetes-validations`) as the API server compiles and runs them
//! (apiextensions-apiserver `pkg/apiserver/schema/cel/compilation.go` and `validation.go`).
//!
//! The language is the maintained `cel` crate's (parser, macros, standard library, the strings
//! extension); what Kubernetes adds to it is here: the values a schema makes of JSON
//! ([`value`]), the escaping of property names ([`escaping`]), Kubernetes' CEL libraries
//! ([`library`]), the checks the API server makes when it compiles a rule ([`check`]) and the
//! bound on what a rule may cost ([`cost`]).

pub mod check;
pub mod cost;
pub mod escaping;
pub mod estimate;
pub mod format;
pub mod library;
pub mod net;
pub mod quantity;
pub mod semver;
pub mod url;
pub mod value;

use crate::json::Node;
use cel::objects::OptionalValue;
use cel::{Context, Env, Program, Value};
use std::sync::{Arc, OnceLock};

/// The latest Kubernetes minor's libraries (every one but those no release enables).
pub const LATEST: u32 = u32::MAX - 1;

/// The variable a rule sees its value as.
const SELF: &str = "self";
/// The variable a transition rule sees the old value as.
const OLD_SELF: &str = "oldSelf";

/// What CEL needs to know of a structural schema node: its value's type and, for the cost
/// bound, its sizes. h46a's compiled schema implements it; so does any plain OpenAPI schema.
/// A resource's root schema reports itself as an embedded resource (the API server gives the
/// root the same `apiVersion`, `kind` and `metadata` fields as an embedded one).
pub trait SchemaView<'s>: Copy + 's {
    /// `type`: `object`, `array`, `string`, `integer`, `number`, `boolean`, or none.
    fn type_name(self) -> Option<&'s str>;
    /// `format`.
    fn format(self) -> Option<&'s str>;
    /// `x-kubernetes-int-or-string`.
    fn int_or_string(self) -> bool;
    /// `x-kubernetes-preserve-unknown-fields`.
    fn preserve_unknown_fields(self) -> bool;
    /// `x-kubernetes-embedded-resource` (and a resource's root).
    fn embedded_resource(self) -> bool;
    /// `nullable`.
    fn nullable(self) -> bool;
    /// Whether `properties` is given (even empty).
    fn has_properties(self) -> bool;
    /// The schema of property `name`.
    fn property(self, name: &str) -> Option<Self>;
    /// The schema of `additionalProperties` (none when it is absent or a boolean).
    fn additional_properties(self) -> Option<Self>;
    /// The schema of `items`.
    fn items(self) -> Option<Self>;
    /// `x-kubernetes-list-type`.
    fn list_type(self) -> Option<&'s str>;
    /// `x-kubernetes-list-map-keys`.
    fn list_map_keys(self) -> Vec<&'s str>;
    /// `maxLength`.
    fn max_length(self) -> Option<u64>;
    /// `maxItems`.
    fn max_items(self) -> Option<u64>;
    /// `maxProperties`.
    fn max_properties(self) -> Option<u64>;
}

/// One failed rule, as the API server reports it at the rule's node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The rule's `fieldPath` as the API server normalises it (`spec.x[key]`), relative to the
    /// node; empty for the node itself.
    pub field_path: String,
    /// The detail: the message, the evaluated `messageExpression`, or the API server's text for a
    /// rule that failed to run.
    pub message: String,
    /// `reason`: `FieldValueInvalid`, `FieldValueForbidden`, `FieldValueRequired` or
    /// `FieldValueDuplicate`; none is `FieldValueInvalid`.
    pub reason: Option<String>,
    /// What the error shows as its value.
    pub value: Shown,
}

/// The value an API server error shows after `Invalid value:`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The node's value (a rule that is false on a scalar).
    Value,
    /// None (a rule false on an object or array: the API server passes `field.OmitValueType`,
    /// printed `Invalid value: <detail>` since Kubernetes 1.31, `Invalid value: "object"` before).
    Omitted,
    /// The schema's type, quoted (`Invalid value: "object": ...`): a rule that could not run.
    SchemaType,
}

/// One compiled rule.
#[derive(Debug)]
struct Rule {
    /// `rule`, trimmed for messages.
    source: String,
    program: Program,
    /// `message`, trimmed.
    message: Option<String>,
    message_expression: Option<(String, Program)>,
    reason: Option<String>,
    /// The normalised `fieldPath`.
    field_path: String,
    uses_old_self: bool,
    optional_old_self: bool,
}

/// The compiled `x-kubernetes-validations` of one schema node: compile once per schema, check
/// every value of that node.
#[derive(Debug, Default)]
pub struct Rules {
    rules: Vec<Rule>,
}

/// The environment every rule runs in: CEL's standard library, the strings extension and
/// Kubernetes' libraries.
fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        // The registrations are fixed: a failure is a bug caught by every test.
        env.add_extension(cel::extensions::strings)
            .expect("the strings extension registers");
        env.add_extension(library::register)
            .expect("Kubernetes' libraries register");
        Arc::new(env)
    })
}

/// The API server's whitespace trimming (Go's `strings.TrimSpace`).
fn trim(s: &str) -> String {
    s.trim().to_owned()
}

impl Rules {
    /// Whether there is no rule.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Whether a rule reads `oldSelf` (a transition rule, `optionalOldSelf` or not).
    pub fn any_uses_old_self(&self) -> bool {
        self.rules.iter().any(|rule| rule.uses_old_self)
    }

    /// Compiles `validations` (the node's `x-kubernetes-validations` array) for the node's
    /// `schema`; the errors are the API server's when it refuses the CRD, each
    /// `x-kubernetes-validations[i].<field>: <error>` relative to the schema node.
    pub fn compile<'s, S: SchemaView<'s>>(validations: &Node<'_>, schema: S) -> Result<Rules, Vec<String>> {
        Rules::compile_for(validations, schema, LATEST)
    }

    /// [`Rules::compile`] for the API server of Kubernetes 1.`minor`: a rule that calls a
    /// library function that minor does not have is refused, as that API server refuses it
    /// (`environment/base.go`). Objects are judged with every library ([`Rules::compile`]): an
    /// API server runs a stored rule with all it has.
    pub fn compile_for<'s, S: SchemaView<'s>>(
        validations: &Node<'_>,
        schema: S,
        minor: u32,
    ) -> Result<Rules, Vec<String>> {
        let Node::Array(items) = validations else {
            return Err(vec![
                "x-kubernetes-validations: Invalid value: must be an array".to_owned(),
            ]);
        };
        let mut rules = Vec::with_capacity(items.len());
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = format!("x-kubernetes-validations[{i}]");
            let text = |key: &str| item.get(key).and_then(Node::as_str);
            let source = text("rule").unwrap_or("");
            if source.trim().is_empty() {
                errors.push(format!("{at}.rule: Required value: rule is not specified"));
                continue;
            }
            let shown = check::rule_json(item);
            let program = match check::compile(source, schema, check::Want::Bool, minor) {
                Ok(program) => program,
                Err(detail) => {
                    errors.push(format!("{at}.rule: Invalid value: {shown}: {detail}"));
                    continue;
                }
            };
            let uses_old_self = program.references().has_variable(OLD_SELF);
            let optional_old_self = item.get("optionalOldSelf").and_then(Node::as_bool);
            if optional_old_self.is_some() && !uses_old_self {
                errors.push(format!(
                    "{at}.optionalOldSelf: Invalid value: {}: may not be set if oldSelf is not used in rule",
                    optional_old_self.unwrap_or_default()
                ));
            }
            let message_expression = match text("messageExpression").filter(|m| !m.trim().is_empty()) {
                None => None,
                Some(m) => match check::compile(m, schema, check::Want::String, minor) {
                    Ok(p) => Some((m.to_owned(), p)),
                    Err(detail) => {
                        errors.push(format!(
                            "{at}.messageExpression: Invalid value: {shown}: messageExpression {detail}"
                        ));
                        None
                    }
                },
            };
            let field_path = match text("fieldPath").filter(|p| !p.is_empty()) {
                None => String::new(),
                Some(path) => match check::field_path(path, schema) {
                    Some(normalised) => normalised,
                    None => {
                        errors.push(format!(
                            "{at}.fieldPath: Invalid value: {}: must be a valid path",
                            crate::text::quote(path)
                        ));
                        continue;
                    }
                },
            };
            rules.push(Rule {
                source: trim(source),
                program,
                message: text("message").map(trim).filter(|m| !m.is_empty()),
                message_expression,
                reason: text("reason").map(str::to_owned),
                field_path,
                uses_old_self,
                optional_old_self: optional_old_self.unwrap_or(false),
            });
        }
        if errors.is_empty() {
            Ok(Rules { rules })
        } else {
            Err(errors)
        }
    }

    /// Runs the rules on `value` (and, for transition rules, `old_value`), with the API
    /// server's budget for one request's CEL.
    pub fn check<'s, S: SchemaView<'s>>(
        &self,
        schema: S,
        value: &Node<'_>,
        old_value: Option<&Node<'_>>,
    ) -> Vec<Violation> {
        let mut budget = cost::Budget::default();
        self.check_within(schema, value, old_value, &mut budget)
    }

    /// [`Rules::check`] drawing on `budget`, the runtime cost budget of one request shared by
    /// every node's rules (`RuntimeCELCostBudget`), charged each rule's floor ([`cost::floor`]):
    /// the rule that runs out of it is reported at its node, and once the rules stopped (out of
    /// budget or past the per-call limit) nothing more is.
    pub fn check_within<'s, S: SchemaView<'s>>(
        &self,
        schema: S,
        value: &Node<'_>,
        old_value: Option<&Node<'_>>,
        budget: &mut cost::Budget,
    ) -> Vec<Violation> {
        let mut out = Vec::new();
        // Only non-null values are validated.
        if self.rules.is_empty() || value.is_null() {
            return out;
        }
        let invalid = |message: String| Violation {
            field_path: String::new(),
            message,
            reason: None,
            value: Shown::SchemaType,
        };
        // Once the rules stopped, nothing more is reported; a budget spent to the last unit stops
        // them at the next node with rules (`remainingBudget <= 0`).
        if budget.stopped() {
            return out;
        }
        if budget.spent() {
            budget.stop();
            out.push(invalid(cost::OUT_OF_BUDGET.to_owned()));
            return out;
        }
        let old_value = old_value.filter(|old| !old.is_null());
        let converted = value::to_value(value, schema);
        let old_converted = old_value.map(|old| value::to_value(old, schema));
        let self_value = match converted {
            Ok(v) => v,
            Err(e) => {
                // The API server's conversion fails only where the value is read; the schema's
                // own validation reports such a value, so one error for the node suffices.
                out.push(invalid(format!("{e} evaluating rule: {}", self.rules[0].error_name())));
                return out;
            }
        };
        let old_self = match old_converted {
            Some(Ok(v)) => Some(v),
            Some(Err(_)) | None => None,
        };
        let object_like = matches!(schema.type_name(), Some("object" | "array")) && !schema.int_or_string();
        let mut plain = Context::with_env(Arc::clone(env()));
        plain.add_variable_from_value(SELF, self_value.clone());
        if let Some(old) = &old_self {
            plain.add_variable_from_value(OLD_SELF, old.clone());
        }
        // The context of `optionalOldSelf` rules, only where one is (a context copies its values).
        let optional = self.rules.iter().any(|r| r.optional_old_self).then(|| {
            let mut optional = Context::with_env(Arc::clone(env()));
            optional.add_variable_from_value(SELF, self_value.clone());
            optional.add_variable_from_value(
                OLD_SELF,
                Value::Opaque(Arc::new(match &old_self {
                    Some(old) => OptionalValue::of(old.clone()),
                    None => OptionalValue::none(),
                })),
            );
            optional
        });
        for rule in &self.rules {
            if rule.uses_old_self && old_self.is_none() && !rule.optional_old_self {
                continue;
            }
            let context = match &optional {
                Some(optional) if rule.optional_old_self => optional,
                _ => &plain,
            };
            let run = cost::run(&rule.program, context, &self_value, old_self.as_ref(), budget);
            let result = match run {
                cost::Run::Done(result) => result,
                cost::Run::OverBudget => {
                    out.push(invalid(cost::OUT_OF_BUDGET.to_owned()));
                    return out;
                }
                cost::Run::OverCallLimit => {
                    out.push(invalid(format!(
                        "'{}': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                        cost::CALL_LIMIT_EXCEEDED,
                        rule.error_name()
                    )));
                    return out;
                }
            };
            match result {
                Ok(Value::Bool(true)) => continue,
                Ok(Value::Bool(false)) => {}
                Ok(other) => {
                    out.push(invalid(format!(
                        "{} evaluating rule: {}",
                        check::no_such_overload_text(&other),
                        rule.error_name()
                    )));
                    continue;
                }
                Err(error) if not_evaluated(&error) => continue,
                Err(error) => {
                    let text = check::error_text(&error);
                    out.push(invalid(if text.starts_with("no such overload") {
                        format!(
                            "'{text}': call arguments did not match a supported operator, function or macro signature for rule: {}",
                            rule.error_name()
                        )
                    } else {
                        format!("{text} evaluating rule: {}", rule.error_name())
                    }));
                    continue;
                }
            }
            let mut detail = None;
            if let Some((source, program)) = &rule.message_expression {
                match message_expression(source, program, context, &self_value, old_self.as_ref(), budget) {
                    Ok(message) => detail = Some(message),
                    Err(Some(stop)) => {
                        out.push(Violation {
                            field_path: rule.field_path.clone(),
                            message: stop,
                            reason: None,
                            value: Shown::SchemaType,
                        });
                        return out;
                    }
                    Err(None) => {}
                }
            }
            let message = detail.unwrap_or_else(|| match &rule.message {
                Some(m) => m.clone(),
                None => format!("failed rule: {}", rule.error_name()),
            });
            out.push(Violation {
                field_path: rule.field_path.clone(),
                message,
                reason: rule.reason.clone(),
                value: if object_like { Shown::Omitted } else { Shown::Value },
            });
        }
        out
    }
}

impl Rule {
    /// How the API server names the rule in an error: its message, else its source
    /// (`ruleErrorString`).
    fn error_name(&self) -> &str {
        self.message.as_deref().unwrap_or(&self.source)
    }
}

/// Whether a rule's error means the module cannot evaluate it, so that it is skipped rather
/// than answered otherwise than the API server answers ([`library::NOT_EVALUATED`]).
/// The `cel` crate's error for a time zone name its chrono-tz does not hold: the module's has
/// only UTC (`.cargo/config.toml`), so a rule naming another zone is not evaluated.
fn not_evaluated(error: &cel::ExecutionError) -> bool {
    matches!(error, cel::ExecutionError::FunctionError { function, message }
        if function == library::NOT_EVALUATED
            || (function == "timezone" && message.starts_with("unknown time zone")))
}

/// Evaluates a `messageExpression`: the message, or `Err(None)` when the rule's `message`
/// takes its place (it failed, was empty or had a line break), or `Err(Some(detail))` when the
/// cost limits stop the rules.
fn message_expression(
    source: &str,
    program: &Program,
    context: &Context<'_, '_>,
    self_value: &Value,
    old_self: Option<&Value>,
    budget: &mut cost::Budget,
) -> Result<String, Option<String>> {
    let result = match cost::run(program, context, self_value, old_self, budget) {
        cost::Run::Done(result) => result,
        cost::Run::OverBudget => {
            return Err(Some(
                "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"
                    .to_owned(),
            ));
        }
        cost::Run::OverCallLimit => {
            return Err(Some(format!(
                "no further validation rules will be run due to call cost exceeds limit for messageExpression: {}",
                crate::text::quote(source)
            )));
        }
    };
    match result {
        Ok(Value::String(s)) => {
            let trimmed = s.trim();
            // Longer than MaxEvaluatedMessageExpressionSizeBytes, with a line break, or empty:
            // the rule's message instead.
            if trimmed.is_empty() || trimmed.len() > 5 * 1024 || trimmed.contains('\n') {
                Err(None)
            } else {
                Ok(trimmed.to_owned())
            }
        }
        _ => Err(None),
    }
}

#[cfg(test)]
mod tests;
