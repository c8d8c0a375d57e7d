//! The validator: an object against a compiled [`Schema`], as the API server validates a custom
//! resource (apiextensions-apiserver: pruning, `pkg/apiserver/schema/pruning`; defaulting and
//! the pruning of nulls, `pkg/apiserver/schema/defaulting`; kube-openapi's schema validator as
//! `pkg/apiserver/validation/validation.go` wraps it into field errors; list sets and maps,
//! `pkg/apiserver/schema/listtype`).
//!
//! Defaults are applied first, as the API server's structural defaulting applies them before it
//! validates (schema and CEL rules alike), to a copy made only where a default applies
//! ([`defaults_apply`], [`defaulted`]); otherwise the object is not copied: a field the schema
//! prunes is reported (strict field validation's `unknown field`) and skipped, and a `null` the
//! API server drops is skipped.
//!
//! The kube-openapi validators run on each value in its order (type, `allOf`/`anyOf`/`oneOf`/
//! `not`, string, format, number, array, `enum`, object) and each reports as it does:
//! `<path> in body must be of type integer: "string"`, `<path> in body should match '<pattern>'`,
//! ... wrapped into the field error its code maps to. A failed `anyOf` or `oneOf` reports, after
//! its own message, the errors of the failing alternative kube-openapi picks: the one whose
//! validation counted the most checks (its `MatchCount`, [`Walk::match_count`]), the first of
//! equals; a `oneOf` that more than one alternative validates reports only its message.

use super::cel::Violation;
use super::cel::cost::Budget;
use super::field_error::{BadValue, ErrorType, FieldError, go_float, go_json, go_quote};
use super::metadata;
use super::schema::{Additional, Format, ListType, Schema, SchemaError, SchemaNode, Types};
use crate::json::{Members, Node, Number};

/// What `anyOf` or `oneOf` made of a value ([`Walk::choose`]).
enum Chosen {
    /// How many alternatives validate it, and the first that does.
    Valid(usize, usize),
    /// None does: the failing alternative kube-openapi reports, with its errors.
    Invalid(Option<(usize, Vec<FieldError>)>),
}

/// How an object is validated.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    /// Leave `status` out: the CRD version has the status subresource, so the API server resets
    /// `status` on a CREATE and keeps the old one on an UPDATE.
    pub skip_status: bool,
    /// Report the fields the schema prunes (`unknown field`).
    pub unknown_fields: bool,
    /// Keep every field of an object schema that declares none (a built-in kind's schema, whose
    /// Go types decode such fields themselves); a CRD's structural schema prunes them.
    pub open_empty_objects: bool,
    /// Validate the value as written, as kube-openapi's validator alone sees it (a CRD's
    /// `default`, [`validate_default`]): nothing pruned (an unknown field is still reported when
    /// `unknown_fields` asks), no `null` dropped, no list-type validation.
    pub as_written: bool,
    /// With `as_written`: the embedded resources the value reaches hold no `metadata`, and their
    /// `apiVersion` and `kind` were judged as the API server's object-meta steps judge a default's
    /// (`crd::embedded_defaults`), so kube-openapi's judgement of them is certain.
    pub embedded_judged: bool,
}

/// Validates `object` against `schema`; with `old_object` (an UPDATE), a value equal to the old
/// object's at the same path is not judged again (the API server's validation ratcheting).
/// The errors in the order the API server finds them for each value; values in key order.
pub fn validate(
    schema: &Schema,
    object: &Node<'_>,
    old_object: Option<&Node<'_>>,
    options: &Options,
) -> Vec<FieldError> {
    validate_noting_rules(schema, object, old_object, options).0
}

/// [`validate`], the errors of the CEL rules the object reached that the CEL library cannot
/// compile (those rules are not checked), in the order of their nodes: the rules of a schema
/// compiled lazily ([`Schema::rules_at`]) are compiled as the object reaches them; and the
/// errors of the parts of a schema compiled part by part ([`Schema::compile_parts`]) that it
/// reached and that could not be compiled (the schema is then unreadable for this object).
pub fn validate_noting_rules(
    schema: &Schema,
    object: &Node<'_>,
    old_object: Option<&Node<'_>>,
    options: &Options,
) -> (Vec<FieldError>, Vec<String>, Vec<SchemaError>) {
    // The API server validates the object as defaulting left it (and reads the stored old one
    // defaulted too): a copy with the defaults filled, made only where a default applies.
    let (defaulted_object, defaulted_old);
    let object = if defaults_apply(schema, schema.root, object, true) {
        defaulted_object = defaulted(schema, schema.root, object, true);
        &defaulted_object
    } else {
        object
    };
    let old_object = match old_object {
        Some(old) if defaults_apply(schema, schema.root, old, true) => {
            defaulted_old = defaulted(schema, schema.root, old, true);
            Some(&defaulted_old)
        }
        old => old,
    };
    let (unreadable, parts) = (std::cell::RefCell::new(Vec::new()), std::cell::RefCell::new(Vec::new()));
    let mut walk = Walk {
        schema,
        options,
        errors: Vec::new(),
        unreadable: &unreadable,
        parts: &parts,
        budget: Budget::default(),
        uncertain: false,
    };
    walk.value(&Place::root(), schema.root, object, old_object, Context::Root);
    let errors = walk.errors;
    (
        errors,
        schema.rule_errors_of(unreadable.into_inner()),
        parts.into_inner(),
    )
}

/// Validates a CRD schema's `default` (`value`) against its schema node `index` as
/// apiextensions-apiserver's `ValidateDefaults` (`pkg/apiserver/schema/defaulting/validation.go`)
/// does, at the field `default` of the node (`path`, as the API server names the node) for a
/// field path, kube-openapi naming the fields inside the default (empty for the default itself):
/// the default must not be pruned (`requirePrunedDefaults`: "must not have unknown fields"),
/// then kube-openapi's validator runs on it as written (no defaulting, pruning or list-type
/// validation), and the CEL rules only when it found nothing. None when the answer is not
/// certain: the default reaches an embedded resource (whose metadata the API server coerces and
/// validates first), a CEL rule that reads `oldSelf` (run there with `oldSelf` the default
/// itself), a rule that does not compile, or a rule that spends what is left of `budget`, the
/// CEL cost budget `ValidateDefaults` shares across one schema's defaults (charged only when
/// the rules run: not when kube-openapi found something).
pub fn validate_default(
    schema: &Schema,
    index: usize,
    value: &Node<'_>,
    path: &str,
    (require_pruned, embedded_judged): (bool, bool),
    budget: &mut Budget,
) -> Option<Vec<FieldError>> {
    let embedded = schema.resolved(index).embedded_resource;
    if embedded && !embedded_judged {
        return None;
    }
    let options = Options {
        unknown_fields: require_pruned,
        as_written: true,
        embedded_judged,
        ..Options::default()
    };
    let (unreadable, parts) = (std::cell::RefCell::new(Vec::new()), std::cell::RefCell::new(Vec::new()));
    let mut walk = Walk {
        schema,
        options: &options,
        errors: Vec::new(),
        unreadable: &unreadable,
        parts: &parts,
        budget: *budget,
        uncertain: false,
    };
    let context = if embedded { Context::Embedded } else { Context::Field };
    walk.value(&Place::root(), index, value, None, context);
    let (unknown, errors): (Vec<FieldError>, Vec<FieldError>) = walk
        .errors
        .into_iter()
        .partition(|error| error.kind == ErrorType::UnknownField);
    // The rules run only when kube-openapi found nothing: only then are they charged, and only
    // then can they stop the budget.
    let schema_found = errors.iter().any(|error| !error.cel);
    if !schema_found {
        *budget = walk.budget;
    }
    if walk.uncertain
        || (!schema_found && walk.budget.stopped())
        || !unreadable.borrow().is_empty()
        || !parts.borrow().is_empty()
    {
        return None;
    }
    let default_path = format!("{path}.default");
    let mut out = Vec::new();
    if !unknown.is_empty() {
        let bad = BadValue::Json(go_json(value));
        out.push(FieldError::invalid(
            default_path.clone(),
            bad,
            "must not have unknown fields",
        ));
    }
    // The CEL rules run only when the schema found nothing.
    for mut error in errors.into_iter().filter(|error| error.cel != schema_found) {
        let inner = |name: &str, cel: bool| match name {
            "" | "<nil>" => default_path.clone(),
            // `fldPath.Index(i)` for the CEL rules, `fldPath.Child(name)` for kube-openapi.
            name if cel && name.starts_with('[') => format!("{default_path}{name}"),
            name => format!("{default_path}.{name}"),
        };
        let at = if error.at.starts_with('[') {
            format!("{default_path}{}", error.at)
        } else {
            inner(&error.at, false)
        };
        error.field = inner(&error.field, error.cel);
        error.at = at;
        out.push(error);
    }
    Some(out)
}

/// Whether the API server's pruning changes a CRD schema's `default` (`value`, of schema node
/// `index`): `schemaHasUnprunedDefaults` prunes the defaults of an old CRD to learn whether
/// `requirePrunedDefaults` holds, and validates nothing, so no CEL rule runs (nor compiles) here.
/// None when it is not certain (as [`validate_default`]'s walk: an embedded resource, whose
/// metadata the API server coerces first, and the values it cannot judge).
/// `embedded_judged` as [`Options::embedded_judged`].
pub fn default_is_pruned(schema: &Schema, index: usize, value: &Node<'_>, embedded_judged: bool) -> Option<bool> {
    let embedded = schema.resolved(index).embedded_resource;
    if embedded && !embedded_judged {
        return None;
    }
    let options = Options {
        unknown_fields: true,
        as_written: true,
        embedded_judged,
        ..Options::default()
    };
    let (unreadable, parts) = (std::cell::RefCell::new(Vec::new()), std::cell::RefCell::new(Vec::new()));
    let mut budget = Budget::default();
    // A spent budget runs no rule ([`Walk::cel_run`]).
    budget.stop();
    let mut walk = Walk {
        schema,
        options: &options,
        errors: Vec::new(),
        unreadable: &unreadable,
        parts: &parts,
        budget,
        uncertain: false,
    };
    let context = if embedded { Context::Embedded } else { Context::Field };
    walk.value(&Place::root(), index, value, None, context);
    if walk.uncertain || !parts.borrow().is_empty() {
        return None;
    }
    Some(walk.errors.iter().any(|error| error.kind == ErrorType::UnknownField))
}

/// Where a value is: its path as kube-openapi names it (`spec.map.key`) and as the list-type
/// validation does (`spec.map[key]`).
#[derive(Clone)]
struct Place {
    name: String,
    field: String,
}

impl Place {
    fn root() -> Place {
        Place {
            name: String::new(),
            field: String::new(),
        }
    }

    fn property(&self, key: &str) -> Place {
        Place {
            name: if self.name.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.name)
            },
            field: if self.field.is_empty() {
                key.to_string()
            } else {
                format!("{}.{key}", self.field)
            },
        }
    }

    fn additional(&self, key: &str) -> Place {
        Place {
            // kube-openapi: `o.Path + "." + key`, trimmed of its leading `.` in the field path.
            name: format!("{}.{key}", self.name),
            field: if self.field.is_empty() {
                format!("[{key}]")
            } else {
                format!("{}[{key}]", self.field)
            },
        }
    }

    fn index(&self, i: usize) -> Place {
        Place {
            name: format!("{}[{i}]", self.name),
            field: format!("{}[{i}]", self.field),
        }
    }

    /// The field path of a kube-openapi error named `name` (`strings.TrimPrefix(name, ".")`;
    /// none prints `<nil>`).
    fn error_path(name: &str) -> String {
        match name {
            "" | "." => "<nil>".to_string(),
            name => name.strip_prefix('.').unwrap_or(name).to_string(),
        }
    }
}

/// What kind of object a value is, for the fields every object may hold.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// The object itself: `apiVersion`, `kind` and `metadata` are not pruned.
    Root,
    /// An `x-kubernetes-embedded-resource`: the same.
    Embedded,
    /// `metadata`: the API server's own type, never pruned by the schema.
    Metadata,
    /// An item of a list with `x-kubernetes-preserve-unknown-fields` (or an item of such an
    /// item): its unknown keys are kept, its known ones pruned as their schemas say (the API
    /// server's pruning hands such items to `skipPrune`, `pruning/algorithm.go`).
    KeptItem,
    /// Any other value.
    Field,
}

struct Walk<'s> {
    schema: &'s Schema,
    options: &'s Options,
    errors: Vec<FieldError>,
    /// The nodes reached whose CEL rules do not compile, for every walk of one validation.
    unreadable: &'s std::cell::RefCell<Vec<usize>>,
    /// The errors of the parts reached that could not be compiled ([`Schema::compile_parts`]).
    parts: &'s std::cell::RefCell<Vec<SchemaError>>,
    /// The request's CEL cost budget, shared by every node's rules.
    budget: Budget,
    /// A value [`validate_default`] cannot judge with certainty was reached.
    uncertain: bool,
}

/// The JSON kind of a value as the unstructured decoder holds it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    Str,
    Array,
    Object,
    Other,
}

fn kind_of(node: &Node<'_>) -> Kind {
    match node {
        Node::Null => Kind::Null,
        Node::Bool(_) => Kind::Bool,
        Node::U64(_) | Node::I64(_) => Kind::Int,
        Node::F64(_) => Kind::Float,
        Node::Str(_) => Kind::Str,
        Node::Array(_) => Kind::Array,
        Node::Object(_) => Kind::Object,
        _ => Kind::Other,
    }
}

/// kube-openapi's name of a value's type and format (`schemaInfoForType`).
fn type_info(node: &Node<'_>) -> (&'static str, &'static str) {
    match kind_of(node) {
        Kind::Bool => ("boolean", ""),
        Kind::Int => ("integer", "int64"),
        Kind::Float => ("number", "float64"),
        Kind::Str => ("string", ""),
        Kind::Array => ("array", ""),
        Kind::Object => ("object", ""),
        Kind::Null | Kind::Other => ("", ""),
    }
}

/// swag's `IsFloat64AJSONInteger`, for the values a JSON document holds.
fn is_json_integer(f: f64) -> bool {
    const MAX: f64 = 9007199254740991.0;
    if !f.is_finite() || !(-MAX..=MAX).contains(&f) {
        return false;
    }
    let g = f.trunc();
    f == g || ((f - g).abs() / (f.abs() + g.abs())) < 1e-9
}

/// Whether two JSON values are equal as Go's `reflect.DeepEqual` finds the unstructured values
/// (numbers of the same kind by value; integers and other numbers compared as numbers, as
/// `enum`'s conversion does).
fn json_equal(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a, b) {
        (Node::Object(_), Node::Object(_)) => {
            let (a, b) = (Members::of_node(a), Members::of_node(b));
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((ka, va), (kb, vb))| ka == kb && json_equal(va, vb))
        }
        (Node::Array(a), Node::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| json_equal(x, y)),
        (Node::Str(a), Node::Str(b)) => a == b,
        (Node::Bool(a), Node::Bool(b)) => a == b,
        (Node::Null, Node::Null) => true,
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x == y || x.as_f64() == y.as_f64(),
            _ => false,
        },
    }
}

impl<'s> Walk<'s> {
    fn node(&self, index: usize) -> &'s SchemaNode {
        let node = self.schema.resolved(index);
        if node.unreadable.is_some() {
            self.unreadable_part(node);
        }
        node
    }

    /// Notes a part reached that could not be compiled (out of line: rare).
    #[cold]
    #[inline(never)]
    fn unreadable_part(&self, node: &SchemaNode) {
        if let Some(error) = &node.unreadable {
            self.parts.borrow_mut().push((**error).clone());
        }
    }

    fn push(&mut self, error: FieldError) {
        self.errors.push(error);
    }

    /// A kube-openapi error of code `kind`, named `name`, with `value` and `message`.
    fn openapi(&mut self, kind: ErrorType, name: &str, value: BadValue, message: String) {
        let path = Place::error_path(name);
        self.push(FieldError::new(kind, path, value, message));
    }

    /// A kube-openapi error that is no `Validation` (the `allOf`/`anyOf`/`oneOf`/`not` messages):
    /// `field.Invalid(nil, "", message)`, printed at `<nil>`.
    fn composite(&mut self, name: &str, message: String) {
        let mut error = FieldError::invalid("<nil>", BadValue::Str(String::new()), message);
        error.at = Place::error_path(name);
        if error.at == "<nil>" {
            error.at.clear();
        }
        self.push(error);
    }

    /// Validates `value` at `place` against schema `index`.
    fn value(&mut self, place: &Place, index: usize, value: &Node<'_>, old: Option<&Node<'_>>, context: Context) {
        if let Some(old) = old
            && json_equal(value, old)
        {
            // Ratcheting: an unchanged value is not judged again.
            return;
        }
        let s = self.node(index);
        let kind = kind_of(value);
        if self.options.as_written
            && (kind == Kind::Other || (context == Context::Embedded && !self.options.embedded_judged))
        {
            // A default reaching an embedded resource has its metadata judged first.
            self.uncertain = true;
        }
        if kind == Kind::Other {
            return;
        }
        let name = place.name.as_str();
        // A default is validated against its schema as the CRD writes it (`ToKubeOpenAPI`, no
        // `StripUnsupportedFormats`): an int-or-string has no type there, and a format the API
        // server strips for objects (or one beside int-or-string) is kept, which kube-openapi's
        // type check reads in ways not followed here (`validate/type.go`): said only when certain.
        if self.options.as_written && !s.format_name.is_empty() && (s.int_or_string || s.kept_format() != s.format_name)
        {
            self.uncertain = true;
        }
        // Type.
        let typed = !(self.options.as_written && s.int_or_string);
        if typed && (!s.types.is_empty() || !s.kept_format().is_empty()) {
            self.types(s, name, value, kind);
        }
        if kind == Kind::Null {
            if let Some(values) = &s.enum_values
                && !values.is_empty()
                && !values.iter().any(Node::is_null)
            {
                self.enum_fail(name, BadValue::Json("null".to_string()), values);
            }
            return;
        }
        // The node's CEL rules run before its children's, as the API server's CEL walk runs them
        // (it matters to the budget they share); their errors are reported after.
        let cel = self.cel_run(index, value, old);
        // allOf, anyOf, oneOf, not.
        self.composition(s, place, value);
        match kind {
            Kind::Str => self.string(s, name, value.as_str().unwrap_or_default()),
            Kind::Int | Kind::Float => self.number(s, name, value),
            Kind::Array => self.array(s, place, value, old, context),
            _ => {}
        }
        // enum.
        if let Some(values) = &s.enum_values
            && !values.is_empty()
            && !values.iter().any(|v| json_equal(v, value))
        {
            self.enum_fail(name, BadValue::of(value), values);
        }
        if kind == Kind::Object {
            self.object(s, place, value, old, context);
        }
        self.cel_report(place, value, cel);
    }

    /// Runs the node's CEL rules (`x-kubernetes-validations`) on the walk's budget: their
    /// violations, each with the schema node whose rule it is.
    fn cel_run(&mut self, index: usize, value: &Node<'_>, old: Option<&Node<'_>>) -> Vec<(usize, Violation)> {
        let mut found = Vec::new();
        let resolved = self.schema.resolve(index);
        if !self.schema.has_rules(index) && !self.schema.has_rules(resolved) {
            return found;
        }
        if self.options.as_written && self.budget.stopped() {
            // A default's rules once the budget is spent (`ValidateDefaults` judges no default
            // after that), or a default only pruned ([`default_is_pruned`]): not compiled.
            return found;
        }
        for at in [index, resolved] {
            if at == resolved && at == index && !self.schema.has_rules(at) {
                continue;
            }
            let Some(rules) = self.rules_at(at) else {
                continue;
            };
            if self.options.as_written && rules.any_uses_old_self() {
                // `ValidateDefaults` runs a transition rule with the default as `oldSelf`.
                self.uncertain = true;
            }
            let view = super::schema::View::new(self.schema, at, self.schema.is_resource_root(at));
            found.extend(
                rules
                    .check_within(view, value, old, &mut self.budget)
                    .into_iter()
                    .map(|v| (at, v)),
            );
            if at == resolved {
                break;
            }
        }
        found
    }

    /// The violations of the node's CEL rules as the API server's field errors
    /// (apiextensions-apiserver `pkg/apiserver/schema/cel/validation.go`).
    fn cel_report(&mut self, place: &Place, value: &Node<'_>, violations: Vec<(usize, Violation)>) {
        for (at, violation) in violations {
            let field = match violation.field_path.as_str() {
                "" => place.field.clone(),
                path if place.field.is_empty() => path.to_string(),
                path if path.starts_with('[') => format!("{}{path}", place.field),
                path => format!("{}.{path}", place.field),
            };
            let field = if field.is_empty() { "<nil>".to_string() } else { field };
            let bad = match violation.value {
                super::cel::Shown::Value => BadValue::of(value),
                super::cel::Shown::Omitted => BadValue::Omit,
                super::cel::Shown::SchemaType => BadValue::Str(self.node(at).type_names.clone()),
            };
            let kind = match violation.reason.as_deref() {
                Some("FieldValueForbidden") => ErrorType::Forbidden,
                Some("FieldValueRequired") => ErrorType::Required,
                Some("FieldValueDuplicate") => ErrorType::Duplicate,
                _ => ErrorType::Invalid,
            };
            let mut error = FieldError::new(kind, field, bad, violation.message);
            error.cel = true;
            self.push(error);
        }
    }

    /// The CEL rules of node `at`, compiled at their first reach; rules that do not compile are
    /// noted for the caller to report, and not checked.
    fn rules_at(&self, at: usize) -> Option<&'s super::cel::Rules> {
        match self.schema.rules_at(at)? {
            Ok(rules) => Some(rules),
            Err(_) => {
                self.unreadable.borrow_mut().push(at);
                None
            }
        }
    }

    fn enum_fail(&mut self, name: &str, value: BadValue, values: &[Node<'static>]) {
        let valid: Vec<String> = values
            .iter()
            .map(|v| match v {
                Node::Str(s) => s.to_string(),
                other => go_json(other),
            })
            .collect();
        self.push(FieldError::not_supported(Place::error_path(name), value, &valid));
    }

    /// The fields the API server's pruning drops below `member`, the value of `key` in an object
    /// (schema `s`, at `place`) whose `additionalProperties` is a boolean: the key is kept, and
    /// what it holds pruned with no schema (`pruning/algorithm.go`, `prune` of a nil schema):
    /// every key of an object in it, each reported unknown at its path (`.` between keys, `[i]`
    /// for an index, as `UnknownFieldPathOptions` joins them).
    fn pruned_below_boolean_additional(&mut self, s: &SchemaNode, place: &Place, key: &str, member: &Node<'_>) {
        if !self.options.unknown_fields || !matches!(s.additional_properties, Additional::Allows(_)) {
            return;
        }
        fn each(field: &str, value: &Node<'_>, out: &mut Vec<FieldError>) {
            match value {
                Node::Object(_) => {
                    for (key, _) in Members::of_node(value).iter() {
                        out.push(FieldError::unknown_field(format!("{field}.{key}")));
                    }
                }
                Node::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        each(&format!("{field}[{i}]"), item, out);
                    }
                }
                _ => {}
            }
        }
        let field = place.property(key).field;
        let mut found = Vec::new();
        each(&field, member, &mut found);
        found.sort_by(|a, b| a.field.cmp(&b.field));
        self.errors.extend(found);
    }

    /// kube-openapi's type validator.
    fn types(&mut self, s: &SchemaNode, name: &str, value: &Node<'_>, kind: Kind) {
        let in_body = |what: &str| format!("{name} in body must be of type {what}");
        if kind == Kind::Null {
            if !s.types.is_empty() && !s.types.contains(Types::NULL) && !s.nullable {
                let message = format!("{}: \"null\"", in_body(&s.type_names));
                self.openapi(ErrorType::TypeInvalid, name, BadValue::Str("null".into()), message);
            }
            return;
        }
        let (sch_type, format) = type_info(value);
        let contains = Types::named(sch_type).is_some_and(|t| s.types.contains(t));
        let is_float_int = sch_type == "number"
            && value.number().is_some_and(|n| is_json_integer(n.as_f64()))
            && s.types.contains(Types::INTEGER);
        let is_int_float = sch_type == "integer" && s.types.contains(Types::NUMBER);
        let kept = s.kept_format();
        let is_lower_int = kept == "int64" && format == "int32";
        let is_lower_float = kept == "float64" && format == "float32";
        if kind != Kind::Str
            && kind != Kind::Array
            && !kept.is_empty()
            && !(contains || format == kept || is_float_int || is_int_float || is_lower_int || is_lower_float)
        {
            let message = format!("{}: {}", in_body(kept), go_quote(format));
            self.openapi(ErrorType::TypeInvalid, name, BadValue::Str(format.into()), message);
            return;
        }
        if !s.types.contains(Types::NUMBER)
            && !s.types.contains(Types::INTEGER)
            && !kept.is_empty()
            && (kind == Kind::Str || kind == Kind::Array)
        {
            return;
        }
        if !(contains || is_float_int || is_int_float) {
            let message = format!("{}: {}", in_body(&s.type_names), go_quote(sch_type));
            self.openapi(ErrorType::TypeInvalid, name, BadValue::Str(sch_type.into()), message);
        }
    }

    /// Whether `value` validates against schema `index` (an alternative of `anyOf`, ...), and
    /// its errors.
    fn alternative(&self, place: &Place, index: usize, value: &Node<'_>) -> Vec<FieldError> {
        let options = Options {
            unknown_fields: false,
            ..*self.options
        };
        let mut walk = Walk {
            schema: self.schema,
            options: &options,
            errors: Vec::new(),
            unreadable: self.unreadable,
            parts: self.parts,
            budget: Budget::default(),
            uncertain: false,
        };
        walk.value(place, index, value, None, Context::Field);
        walk.errors
    }

    /// kube-openapi's `MatchCount` of schema `index` on `value` (`SchemaValidator.Validate`):
    /// one for the schema, and for each of its validators that applies to the value one, plus
    /// what that validator counted (the type validator one when the type matches; the number
    /// validator one; the slice validator one and its items'; the object validator its fields';
    /// the composition validator one and its chosen alternatives'). It counts checks run, not
    /// checks passed: of failing alternatives, kube-openapi reports the errors of the one that
    /// counted most (the first of equals).
    fn match_count(&self, place: &Place, index: usize, value: &Node<'_>) -> usize {
        let s = self.node(index);
        let kind = kind_of(value);
        let type_matches = || {
            let mut scratch = Walk {
                schema: self.schema,
                options: self.options,
                errors: Vec::new(),
                unreadable: self.unreadable,
                parts: self.parts,
                budget: Budget::default(),
                uncertain: false,
            };
            scratch.types(s, &place.name, value, kind);
            scratch.errors.is_empty()
        };
        if kind == Kind::Null {
            // The type validator alone (and the enum validator, which counts nothing).
            return usize::from(type_matches());
        }
        let mut count = 1;
        if !s.types.is_empty() || !s.kept_format().is_empty() {
            count += 1 + usize::from(type_matches());
        }
        count += 1 + self.composition_count(s, place, value);
        match kind {
            Kind::Str => count += 1 + usize::from(s.format.is_some()),
            Kind::Int | Kind::Float => count += 2,
            Kind::Array => {
                count += 2;
                if let (Some(items), Node::Array(values)) = (s.items, value) {
                    for (i, item) in values.iter().enumerate() {
                        count += self.match_count(&place.index(i), items, item);
                    }
                }
            }
            Kind::Object => {
                count += 1;
                for (key, member) in Members::of_node(value).iter() {
                    let child = s.property(key).or(match s.additional_properties {
                        Additional::Schema(index) => Some(index),
                        _ => None,
                    });
                    if let Some(child) = child {
                        count += self.match_count(&place.property(key), child, member);
                    }
                }
            }
            _ => {}
        }
        // The enum validator.
        count + 1
    }

    /// The composition validator's own count: one, and the alternatives it keeps
    /// (`schemaPropsValidator.Validate`).
    fn composition_count(&self, s: &SchemaNode, place: &Place, value: &Node<'_>) -> usize {
        let mut count = 1;
        if !s.any_of.is_empty() {
            count += match self.choose(&s.any_of, place, value, true) {
                Chosen::Valid(_, first) | Chosen::Invalid(Some((first, _))) => self.match_count(place, first, value),
                Chosen::Invalid(None) => 0,
            };
        }
        if !s.one_of.is_empty() {
            count += match self.choose(&s.one_of, place, value, false) {
                Chosen::Valid(1, first) | Chosen::Invalid(Some((first, _))) => self.match_count(place, first, value),
                _ => 0,
            };
        }
        for &part in &s.all_of {
            count += self.match_count(place, part, value);
        }
        count
    }

    /// Which alternatives of `anyOf` (`stop_at_valid`) or `oneOf` validate `value`, as
    /// kube-openapi goes through them: the number valid and the first of them, or, none being
    /// valid, the failing alternative that counted most (the first of equals) with its errors.
    /// For `oneOf`, a failure after a valid alternative is not weighed (none is reported then).
    fn choose(&self, alternatives: &[usize], place: &Place, value: &Node<'_>, stop_at_valid: bool) -> Chosen {
        let mut valid = 0;
        let mut first_valid = None;
        let mut best: Option<(usize, usize, Vec<FieldError>)> = None;
        for &alternative in alternatives {
            let errors = self.alternative(place, alternative, value);
            if errors.is_empty() {
                valid += 1;
                first_valid.get_or_insert(alternative);
                best = None;
                if stop_at_valid {
                    break;
                }
                continue;
            }
            if valid == 0 {
                let count = self.match_count(place, alternative, value);
                if best.as_ref().is_none_or(|(_, most, _)| count > *most) {
                    best = Some((alternative, count, errors));
                }
            }
        }
        match first_valid {
            Some(first) => Chosen::Valid(valid, first),
            None => Chosen::Invalid(best.map(|(alternative, _, errors)| (alternative, errors))),
        }
    }

    fn composition(&mut self, s: &SchemaNode, place: &Place, value: &Node<'_>) {
        let name = place.name.as_str();
        if !s.any_of.is_empty()
            && let Chosen::Invalid(best) = self.choose(&s.any_of, place, value, true)
        {
            self.composite(
                name,
                format!("{} must validate at least one schema (anyOf)", go_quote(name)),
            );
            self.errors.extend(best.map(|(_, errors)| errors).unwrap_or_default());
        }
        if !s.one_of.is_empty() {
            let (validated, best) = match self.choose(&s.one_of, place, value, false) {
                Chosen::Valid(validated, _) => (validated, None),
                Chosen::Invalid(best) => (0, best),
            };
            if validated != 1 {
                let found = if validated == 0 {
                    "Found none valid".to_string()
                } else {
                    format!("Found {validated} valid alternatives")
                };
                self.composite(
                    name,
                    format!(
                        "{} must validate one and only one schema (oneOf). {found}",
                        go_quote(name)
                    ),
                );
                self.errors.extend(best.map(|(_, errors)| errors).unwrap_or_default());
            }
        }
        if !s.all_of.is_empty() {
            let mut validated = 0;
            let mut errors = Vec::new();
            for &part in &s.all_of {
                let part_errors = self.alternative(place, part, value);
                if part_errors.is_empty() {
                    validated += 1;
                }
                errors.extend(part_errors);
            }
            self.errors.extend(errors);
            if validated != s.all_of.len() {
                let none = if validated == 0 { ". None validated" } else { "" };
                self.composite(
                    name,
                    format!("{} must validate all the schemas (allOf){none}", go_quote(name)),
                );
            }
        }
        if let Some(not) = s.not
            && self.alternative(place, not, value).is_empty()
        {
            self.composite(name, format!("{} must not validate the schema (not)", go_quote(name)));
        }
    }

    fn string(&mut self, s: &SchemaNode, name: &str, text: &str) {
        let length = text.chars().count() as i64;
        if let Some(max) = s.max_length
            && length > max
        {
            self.push(FieldError::too_long(Place::error_path(name), max));
        } else if let Some(min) = s.min_length
            && length < min
        {
            let message = format!("{name} in body should be at least {min} chars long");
            self.openapi(ErrorType::Invalid, name, BadValue::Str(text.into()), message);
        } else if let Some(pattern) = &s.pattern
            && pattern.matches(text) == Some(false)
        {
            let message = format!("{name} in body should match '{}'", pattern.source);
            self.openapi(ErrorType::Invalid, name, BadValue::Str(text.into()), message);
        }
        if let Some(format) = s.format
            && !format_valid(format, text)
        {
            let message = format!("{name} in body must be of type {}: {}", s.format_name, go_quote(text));
            self.openapi(ErrorType::TypeInvalid, name, BadValue::Str(text.into()), message);
        }
    }

    fn number(&mut self, s: &SchemaNode, name: &str, value: &Node<'_>) {
        let Some(number) = value.number() else { return };
        let bad = BadValue::of(value);
        let integer = match number {
            Number::I64(n) => Some(n),
            Number::U64(n) => i64::try_from(n).ok(),
            Number::F64(_) => None,
        };
        if let Some(factor) = s.multiple_of {
            let message = match integer {
                // `MultipleOfInt`: the factor as an int64.
                Some(n) => {
                    let factor = factor as i64;
                    (factor > 0 && n % factor != 0).then(|| format!("{name} in body should be a multiple of {factor}"))
                }
                None => {
                    let data = number.as_f64();
                    let quotient = if factor < 1.0 {
                        1.0 / factor * data
                    } else {
                        data / factor
                    };
                    (factor > 0.0 && !is_json_integer(quotient))
                        .then(|| format!("{name} in body should be a multiple of {}", go_float(factor)))
                }
            };
            if let Some(message) = message {
                self.openapi(ErrorType::Invalid, name, bad.clone(), message);
            }
        }
        // Minimum before maximum, as kube-openapi merges them.
        if let Some(min) = s.minimum {
            let (below, shown) = match integer {
                Some(n) => {
                    let min = min as i64;
                    (if s.exclusive_minimum { n <= min } else { n < min }, min.to_string())
                }
                None => {
                    let x = number.as_f64();
                    (if s.exclusive_minimum { x <= min } else { x < min }, go_float(min))
                }
            };
            if below {
                let relation = if s.exclusive_minimum {
                    "greater than"
                } else {
                    "greater than or equal to"
                };
                let message = format!("{name} in body should be {relation} {shown}");
                self.openapi(ErrorType::Invalid, name, bad.clone(), message);
            }
        }
        if let Some(max) = s.maximum {
            let (above, shown) = match integer {
                Some(n) => {
                    let max = max as i64;
                    (if s.exclusive_maximum { n >= max } else { n > max }, max.to_string())
                }
                None => {
                    let x = number.as_f64();
                    (if s.exclusive_maximum { x >= max } else { x > max }, go_float(max))
                }
            };
            if above {
                let relation = if s.exclusive_maximum {
                    "less than"
                } else {
                    "less than or equal to"
                };
                let message = format!("{name} in body should be {relation} {shown}");
                self.openapi(ErrorType::Invalid, name, bad, message);
            }
        }
    }

    fn array(&mut self, s: &SchemaNode, place: &Place, value: &Node<'_>, old: Option<&Node<'_>>, context: Context) {
        let Node::Array(items) = value else { return };
        let name = place.name.as_str();
        let old_items = old.and_then(|old| match old {
            Node::Array(items) => Some(items.as_slice()),
            _ => None,
        });
        if let Some(item_schema) = s.items {
            for (i, element) in items.iter().enumerate() {
                let old_element = self.correlated_item(s, element, old_items);
                let item = self.item_context(self.node(item_schema));
                let item = if item == Context::Field && (s.preserve_unknown_fields || context == Context::KeptItem) {
                    Context::KeptItem
                } else {
                    item
                };
                self.value(&place.index(i), item_schema, element, old_element, item);
            }
        }
        let size = items.len() as i64;
        if let Some(min) = s.min_items
            && size < min
        {
            let message = format!("{name} in body should have at least {min} items");
            self.openapi(ErrorType::Invalid, name, BadValue::Int(size), message);
        }
        if let Some(max) = s.max_items
            && size > max
        {
            self.push(FieldError::too_many(Place::error_path(name), size, max));
        }
        if s.unique_items
            && items
                .iter()
                .enumerate()
                .any(|(i, a)| items[..i].iter().any(|b| json_equal(a, b)))
        {
            let message = format!("{name} in body shouldn't contain duplicates");
            self.openapi(ErrorType::Invalid, name, BadValue::Str(String::new()), message);
        }
        if !self.options.as_written {
            self.list_type(s, place, items);
        }
    }

    /// The old value of an array item, for ratcheting: only a `map` list's items correlate, by
    /// their keys (apiextensions-apiserver's `CorrelatedObject`).
    fn correlated_item<'o>(
        &self,
        s: &SchemaNode,
        element: &Node<'_>,
        old: Option<&'o [Node<'o>]>,
    ) -> Option<&'o Node<'o>> {
        let old = old?;
        if s.list_type != Some(ListType::Map) || s.list_map_keys.is_empty() {
            return None;
        }
        let key = |node: &Node<'_>| -> Vec<String> {
            s.list_map_keys
                .iter()
                .map(|k| effective_get(node, k).map(go_json).unwrap_or_default())
                .collect()
        };
        let wanted = key(element);
        old.iter().find(|candidate| key(candidate) == wanted)
    }

    fn item_context(&self, item: &SchemaNode) -> Context {
        if item.embedded_resource {
            Context::Embedded
        } else {
            Context::Field
        }
    }

    /// `x-kubernetes-list-type`: duplicates of a `set`, keys of a `map` (`listtype/validation.go`).
    fn list_type(&mut self, s: &SchemaNode, place: &Place, items: &[Node<'_>]) {
        match s.list_type {
            Some(ListType::Set) => {
                for i in first_repeats(items.iter().map(go_json).collect()) {
                    self.push(FieldError::duplicate(place.index(i).field, BadValue::of(&items[i])));
                }
            }
            Some(ListType::Map) => {
                for (i, item) in items.iter().enumerate() {
                    if !matches!(item, Node::Object(_) | Node::Null) {
                        self.push(FieldError::invalid(
                            place.index(i).field,
                            BadValue::of(item),
                            "must be an object for an array of list-type map",
                        ));
                        return;
                    }
                }
                let keys: Vec<Node<'_>> = items
                    .iter()
                    .map(|item| {
                        let entries = s
                            .list_map_keys
                            .iter()
                            .filter_map(|key| {
                                effective_get(item, key)
                                    .map(|value| (std::borrow::Cow::Borrowed(key.as_str()), value.clone()))
                            })
                            .collect();
                        Node::Object(entries)
                    })
                    .collect();
                for i in first_repeats(keys.iter().map(go_json).collect()) {
                    self.push(FieldError::duplicate(place.index(i).field, BadValue::of(&keys[i])));
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, s: &SchemaNode, place: &Place, value: &Node<'_>, old: Option<&Node<'_>>, context: Context) {
        let name = place.name.as_str();
        let members = Members::of_node(value);
        let old_members = old.filter(|old| matches!(old, Node::Object(_))).map(Members::of_node);
        // Pruning and the pruning of nulls: the members validation sees.
        let mut seen: Vec<(&str, &Node<'_>, Option<usize>)> = Vec::with_capacity(members.len());
        for (key, member) in members.iter() {
            if context == Context::Root && self.options.skip_status && key == "status" {
                continue;
            }
            let meta = matches!(context, Context::Root | Context::Embedded)
                && matches!(key, "apiVersion" | "kind" | "metadata");
            let child = s.property(key).or(match s.additional_properties {
                Additional::Schema(index) => Some(index),
                _ => None,
            });
            // A schema that declares no field at all keeps them all where it names no type (a
            // built-in schema's `JSONSchemaPropsOrArray`, a value validation) or where the
            // schema is a built-in kind's (`RawExtension`, decoded by its own Go type).
            let declares_nothing = s.properties.is_empty() && s.additional_properties == Additional::Unset;
            let kept = child.is_some()
                || (declares_nothing && (s.types.is_empty() || self.options.open_empty_objects))
                || meta
                || s.preserve_unknown_fields
                || context == Context::Metadata
                || context == Context::KeptItem
                || matches!(s.additional_properties, Additional::Allows(_));
            if child.is_none() && !meta && context != Context::Metadata {
                self.pruned_below_boolean_additional(s, place, key, member);
            }
            if !kept {
                if self.options.unknown_fields {
                    let field = place.property(key).field;
                    self.push(FieldError::unknown_field(field));
                }
                if !self.options.as_written {
                    continue;
                }
            }
            // The pruning of nulls: a `null` its schema does not allow (and defaulting did not
            // replace) is dropped.
            if !self.options.as_written
                && child.is_some_and(|child| member.is_null() && !self.schema.own(child).nullable)
            {
                continue;
            }
            seen.push((key, member, child));
        }
        let count = seen.len() as i64;
        if let Some(min) = s.min_properties
            && count < min
        {
            let message = format!("{name} in body should have at least {min} properties");
            self.openapi(ErrorType::Invalid, name, BadValue::Int(count), message);
        }
        if let Some(max) = s.max_properties
            && count > max
        {
            self.push(FieldError::too_many(Place::error_path(name), count, max));
        }
        // `additionalProperties: false`: every key but the properties, named by the key
        // (`errors.PropertyNotAllowed`).
        if s.additional_properties == Additional::Allows(false) {
            for (key, _, _) in &seen {
                if s.property(key).is_none() {
                    let message = format!("{name}.{key} in body is a forbidden property");
                    self.openapi(ErrorType::Invalid, name, BadValue::Str(key.to_string()), message);
                }
            }
        }
        // Additional properties first, then properties, as kube-openapi's object validator.
        for (key, member, child) in &seen {
            if let (Some(child), None) = (child, s.property(key)) {
                let old_member = old_members.as_ref().and_then(|m| m.get(key));
                self.value(&place.additional(key), *child, member, old_member, Context::Field);
            }
        }
        for (key, member, child) in &seen {
            if let Some(child) = child
                && s.property(key).is_some()
            {
                let old_member = old_members.as_ref().and_then(|m| m.get(key));
                let child_node = self.node(*child);
                let child_context = if matches!(context, Context::Root | Context::Embedded) && *key == "metadata" {
                    Context::Metadata
                } else if child_node.embedded_resource {
                    Context::Embedded
                } else {
                    Context::Field
                };
                self.value(&place.property(key), *child, member, old_member, child_context);
            }
        }
        for key in &s.required {
            if !seen.iter().any(|(k, _, _)| k == key) {
                // kube-openapi names it `o.Path + "." + key`.
                self.push(FieldError::required(Place::error_path(&format!("{name}.{key}")), ""));
            }
        }
        if context == Context::Embedded {
            for key in ["apiVersion", "kind"] {
                if !seen
                    .iter()
                    .any(|(k, v, _)| *k == key && v.as_str().is_some_and(|s| !s.is_empty()))
                {
                    self.push(FieldError::required(place.property(key).field, "must not be empty"));
                }
            }
        }
    }
}

/// Whether Go's `base64.StdEncoding` decodes `text`: it skips line breaks and accepts non-zero
/// padding bits (`QR==`).
pub(super) fn is_go_base64(text: &str) -> bool {
    use base64::Engine;
    use base64::engine::{GeneralPurpose, GeneralPurposeConfig};
    const GO_STD: GeneralPurpose = GeneralPurpose::new(
        &base64::alphabet::STANDARD,
        GeneralPurposeConfig::new().with_decode_allow_trailing_bits(true),
    );
    let cleaned: String = text.chars().filter(|c| *c != '\r' && *c != '\n').collect();
    GO_STD.decode(cleaned).is_ok()
}

/// Whether defaulting would change `value` under schema `index` (apiextensions-apiserver's
/// structural defaulting, `pkg/apiserver/schema/defaulting`): a property with a `default` that
/// the value leaves out, or a property, additional property or item that is a `null` its schema
/// does not allow and has a default, at any depth. A `resource` (the object, an embedded
/// resource) keeps its `metadata` as written: the API server's own type.
fn defaults_apply(schema: &Schema, index: usize, value: &Node<'_>, resource: bool) -> bool {
    let node = schema.resolved(index);
    let member_applies = |child: usize, member: &Node<'_>| {
        let own = schema.own(child);
        (member.is_null() && !own.nullable && own.default.is_some())
            || defaults_apply(schema, child, member, schema.resolved(child).embedded_resource)
    };
    match value {
        Node::Object(entries) => {
            node.properties
                .iter()
                .any(|(key, property)| value.get(key).is_none() && schema.own(*property).default.is_some())
                || entries.iter().any(|(key, member)| {
                    if resource && key == "metadata" {
                        return false;
                    }
                    match (node.property(key), node.additional_properties) {
                        (Some(child), _) | (None, Additional::Schema(child)) => member_applies(child, member),
                        _ => false,
                    }
                })
        }
        Node::Array(items) => node
            .items
            .is_some_and(|item| items.iter().any(|element| member_applies(item, element))),
        _ => false,
    }
}

/// `value` under schema `index` as structural defaulting leaves it: each missing property with a
/// `default` takes it, each `null` its schema does not allow takes its schema's default, and the
/// defaults are defaulted in turn (`Default` recurses into what it filled in). Written by hand:
/// the defaulting of Kubernetes' unstructured objects has no Rust counterpart.
fn defaulted<'j>(schema: &Schema, index: usize, value: &Node<'j>, resource: bool) -> Node<'j> {
    let node = schema.resolved(index);
    let member = |child: usize, member: &Node<'j>| -> Node<'j> {
        let own = schema.own(child);
        let embedded = schema.resolved(child).embedded_resource;
        match &own.default {
            Some(default) if member.is_null() && !own.nullable => defaulted(schema, child, default, embedded),
            _ => defaulted(schema, child, member, embedded),
        }
    };
    match value {
        Node::Object(entries) => {
            let mut out: Vec<(std::borrow::Cow<'j, str>, Node<'j>)> = entries
                .iter()
                .map(|(key, value)| {
                    let value = match (node.property(key), node.additional_properties) {
                        _ if resource && key == "metadata" => value.clone(),
                        (Some(child), _) | (None, Additional::Schema(child)) => member(child, value),
                        _ => value.clone(),
                    };
                    (key.clone(), value)
                })
                .collect();
            for (key, property) in &node.properties {
                if value.get(key).is_none()
                    && let Some(default) = &schema.own(*property).default
                {
                    let embedded = schema.resolved(*property).embedded_resource;
                    let filled = defaulted(schema, *property, default, embedded);
                    out.push((std::borrow::Cow::Owned(key.clone()), filled));
                }
            }
            Node::Object(out)
        }
        Node::Array(items) => match node.items {
            Some(item) => Node::Array(items.iter().map(|element| member(item, element)).collect()),
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

/// The value of `key` in `item` as validation sees it (a `null` is none).
fn effective_get<'n>(node: &'n Node<'n>, key: &str) -> Option<&'n Node<'n>> {
    node.get(key).filter(|v| !v.is_null())
}

/// The indexes of the items that repeat an earlier one, each value once (at its second
/// occurrence), as `validateListSet` reports them.
fn first_repeats(keys: Vec<String>) -> Vec<usize> {
    let mut counts: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    let mut repeats = Vec::new();
    for (i, key) in keys.iter().enumerate() {
        let count = counts.entry(key.as_str()).or_insert(0);
        *count += 1;
        if *count == 2 {
            repeats.push(i);
        }
    }
    repeats
}

impl SchemaNode {
    /// The format as kube-openapi's type validator sees it after the API server strips the
    /// formats it does not support: a checked string format, or an integer or number format.
    fn kept_format(&self) -> &str {
        if self.format.is_some() {
            return &self.format_name;
        }
        let kept = (self.types == Types::INTEGER && matches!(self.format_name.as_str(), "int32" | "int64"))
            || (self.types == Types::NUMBER && matches!(self.format_name.as_str(), "float" | "double"));
        if kept { &self.format_name } else { "" }
    }
}

// kube-openapi's copy of govalidator (`pkg/internal/third_party/govalidator`) checks the formats
// below with Go regular expressions and a checksum; they are written out by hand, each as short
// as its pattern, since Go's `\d` and `\s` are ASCII classes (Rust's are Unicode ones).

/// ISBN text with Go's `[\s-]+` (ASCII white space and `-`) taken out, as `IsISBN` cleans it.
fn isbn_digits(text: &str) -> Vec<u8> {
    text.bytes()
        .filter(|b| !matches!(b, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'-'))
        .collect()
}

/// govalidator's `IsISBN10`: nine digits and a digit or `X`, whose weighted sum is a multiple of 11.
fn is_isbn10(text: &str) -> bool {
    let digits = isbn_digits(text);
    if digits.len() != 10
        || !digits[..9].iter().all(u8::is_ascii_digit)
        || !(digits[9].is_ascii_digit() || digits[9] == b'X')
    {
        return false;
    }
    let mut sum: u32 = (0..9).map(|i| (i as u32 + 1) * u32::from(digits[i] - b'0')).sum();
    sum += 10
        * if digits[9] == b'X' {
            10
        } else {
            u32::from(digits[9] - b'0')
        };
    sum.is_multiple_of(11)
}

/// govalidator's `IsISBN13`: thirteen digits, the last the check digit of the others (1, 3 weights).
fn is_isbn13(text: &str) -> bool {
    let digits = isbn_digits(text);
    if digits.len() != 13 || !digits.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let sum: u32 = (0..12).map(|i| [1, 3][i % 2] * u32::from(digits[i] - b'0')).sum();
    u32::from(digits[12] - b'0') == (10 - sum % 10) % 10
}

/// govalidator's `IsCreditCard`: the digits of the text (every other character dropped) are a
/// number of a known issuer's form (its `CreditCard` pattern), and pass the Luhn check.
fn is_credit_card(text: &str) -> bool {
    use std::sync::OnceLock;
    static ISSUERS: OnceLock<regex_lite::Regex> = OnceLock::new();
    let issuers = ISSUERS.get_or_init(|| {
        regex_lite::Regex::new(
            r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
        )
        .expect("a valid built-in pattern")
    });
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !issuers.is_match(&digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let d = u32::from(b - b'0');
            match (i % 2 == 1, d * 2) {
                (true, doubled) if doubled >= 10 => doubled % 10 + 1,
                (true, doubled) => doubled,
                (false, _) => d,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// govalidator's `IsSSN`: 11 bytes matching `^\d{3}[- ]?\d{2}[- ]?\d{4}$`, so both separators.
fn is_ssn(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| b[range].iter().all(u8::is_ascii_digit);
    b.len() == 11
        && digits(0..3)
        && matches!(b[3], b'-' | b' ')
        && digits(4..6)
        && matches!(b[6], b'-' | b' ')
        && digits(7..11)
}

/// govalidator's `IsRGBcolor`: `rgb(r,g,b)`, each a number from 0 to 255 written without a
/// leading zero, with ASCII white space around them.
fn is_rgb_color(text: &str) -> bool {
    let Some(inner) = text.strip_prefix("rgb(").and_then(|t| t.strip_suffix(')')) else {
        return false;
    };
    let parts: Vec<&str> = inner.split(',').collect();
    parts.len() == 3
        && parts.iter().all(|part| {
            let n = part.trim_matches(|c| matches!(c, '\t' | '\n' | '\x0c' | '\r' | ' '));
            !n.is_empty()
                && n.len() <= 3
                && n.bytes().all(|b| b.is_ascii_digit())
                && (n == "0" || !n.starts_with('0'))
                && n.parse::<u16>().is_ok_and(|v| v <= 255)
        })
}

/// Whether `text` is valid in `format`, as kube-openapi's `strfmt` registry finds it.
pub fn format_valid(format: Format, text: &str) -> bool {
    use std::sync::OnceLock;
    static PATTERNS: OnceLock<[regex_lite::Regex; 6]> = OnceLock::new();
    let patterns = PATTERNS.get_or_init(|| {
        let compile = |p: &str| regex_lite::Regex::new(p).expect("a valid built-in pattern");
        [
            // strfmt's HostnamePattern, its `\p{S}` and `\p{L}` taken out: `hostname_letters`
            // stands a letter or symbol for one ASCII character the same classes hold.
            compile(
                r"^([a-zA-Z0-9]((-?[a-zA-Z0-9]{0,62})?)|([a-zA-Z0-9](([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.)){1,}([a-zA-Z]){2,63})$",
            ),
            compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
            compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
            compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
            compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"),
            // strfmt's DateTimePattern, for the part after the `t`.
            compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"),
        ]
    });
    match format {
        Format::BsonObjectId => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        Format::Uri => super::go_formats::is_request_uri(text),
        Format::Email => super::go_formats::is_email(text),
        Format::Password => true,
        Format::Isbn => is_isbn10(text) || is_isbn13(text),
        Format::Isbn10 => is_isbn10(text),
        Format::Isbn13 => is_isbn13(text),
        Format::CreditCard => is_credit_card(text),
        Format::Ssn => is_ssn(text),
        Format::RgbColor => is_rgb_color(text),
        Format::Hostname => {
            patterns[0].is_match(&hostname_letters(text))
                && text.len() <= 255
                && text.split('.').all(|label| label.len() <= 63)
        }
        Format::Ipv4 => text.contains('.') && text.parse::<std::net::IpAddr>().is_ok(),
        Format::Ipv6 => text.contains(':') && text.parse::<std::net::IpAddr>().is_ok(),
        Format::Cidr => is_cidr(text),
        Format::Mac => is_mac(text),
        Format::Uuid => patterns[1].is_match(text),
        Format::Uuid3 => patterns[2].is_match(text),
        Format::Uuid4 => patterns[3].is_match(text),
        Format::Uuid5 => patterns[4].is_match(text),
        Format::HexColor => {
            let hex = text.strip_prefix('#').unwrap_or(text);
            (hex.len() == 3 || hex.len() == 6) && hex.bytes().all(|b| b.is_ascii_hexdigit())
        }
        Format::Byte => is_go_base64(text),
        Format::Date => is_date(text),
        Format::DateTime => {
            // strfmt's `IsDateTime`.
            if text.len() < 4 {
                return false;
            }
            let lower = text.to_lowercase();
            let parts: Vec<&str> = lower.split('t').collect();
            if parts.len() < 2 || !is_date(parts[0]) {
                return false;
            }
            match patterns[5].captures(parts[1]) {
                Some(c) => &c[1] <= "23" && &c[2] <= "59" && &c[3] <= "59",
                None => false,
            }
        }
        Format::Duration => is_duration(text),
        Format::K8sShortName => metadata::is_dns1123_label(text).is_empty(),
        Format::K8sLongName => metadata::is_dns1123_subdomain(text).is_empty(),
    }
}

/// `text` with each non-ASCII character replaced for strfmt's HostnamePattern, whose classes
/// are ASCII letters and digits with `\p{L}` (letters) and `\p{S}` (symbols): a letter becomes
/// `a` (in every class of the pattern), a symbol `0` (in every class but the top-level
/// domain's, as `\p{S}` is), anything else `!` (in none). Written by hand because `regex-lite`
/// has no Unicode classes and `regex`'s tables cost a module hundreds of kilobytes; Rust's
/// `char` has no general category, so a non-ASCII letter is what `char::is_alphabetic` says
/// (letters, letter numbers and combining marks) and every other non-ASCII character but
/// spaces and controls counts as a symbol: a superset of Go's classes, so no hostname Go accepts
/// is refused.
fn hostname_letters(text: &str) -> std::borrow::Cow<'_, str> {
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| match c {
            c if c.is_ascii() => c,
            c if c.is_alphabetic() => 'a',
            c if c.is_whitespace() || c.is_control() => '!',
            _ => '0',
        })
        .collect()
}

/// Go's `time.Parse("2006-01-02", text)`.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| -> Option<u32> {
        let part = &text[range];
        part.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| part.parse().ok())
            .flatten()
    };
    let (Some(year), Some(month), Some(day)) = (digits(0..4), digits(5..7), digits(8..10)) else {
        return false;
    };
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// strfmt's `ParseDuration`: Go's `time.ParseDuration`, else any `<digits> <unit>` it names.
fn is_duration(text: &str) -> bool {
    if go_duration(text) {
        return true;
    }
    const UNITS: [&[&str]; 8] = [
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    use std::sync::OnceLock;
    static MATCHER: OnceLock<regex_lite::Regex> = OnceLock::new();
    let matcher = MATCHER.get_or_init(|| regex_lite::Regex::new(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)").expect("valid"));
    let mut ok = false;
    for capture in matcher.captures_iter(text) {
        if capture[1].parse::<i64>().is_err() {
            return false;
        }
        let unit = capture[2].to_lowercase();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, variant) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(variant)) || variant.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// Go's `time.ParseDuration` grammar: `[-+]?` then `0`, or numbers with units.
fn go_duration(text: &str) -> bool {
    let rest = text.strip_prefix(['-', '+']).unwrap_or(text);
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    let mut s = rest;
    while !s.is_empty() {
        let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let mut consumed = digits;
        let mut any = digits > 0;
        if s[consumed..].starts_with('.') {
            consumed += 1;
            let fraction = s[consumed..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(s.len() - consumed);
            any |= fraction > 0;
            consumed += fraction;
        }
        if !any {
            return false;
        }
        s = &s[consumed..];
        let unit_len = s.find(|c: char| c == '.' || c.is_ascii_digit()).unwrap_or(s.len());
        if !matches!(&s[..unit_len], "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return false;
        }
        s = &s[unit_len..];
    }
    true
}

/// Go's `net.ParseCIDR`.
fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Ok(address) = address.parse::<std::net::IpAddr>() else {
        return false;
    };
    let bits = if address.is_ipv4() { 32 } else { 128 };
    !prefix.is_empty()
        && prefix.len() <= 3
        && prefix.bytes().all(|b| b.is_ascii_digit())
        && !(prefix.len() > 1 && prefix.starts_with('0'))
        && prefix.parse::<u32>().is_ok_and(|p| p <= bits)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx:..`, `xx-xx-..` or `xxxx.xxxx.xxxx`.
fn is_mac(text: &str) -> bool {
    let hex = |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit());
    let groups_ok = |groups: Vec<&str>, len: usize, counts: &[usize]| {
        counts.contains(&groups.len()) && groups.iter().all(|g| hex(g, len))
    };
    if text.contains(':') {
        groups_ok(text.split(':').collect(), 2, &[6, 8, 20])
    } else if text.contains('-') {
        groups_ok(text.split('-').collect(), 2, &[6, 8, 20])
    } else if text.contains('.') {
        groups_ok(text.split('.').collect(), 4, &[3, 4, 10])
    } else {
        false
    }
}

#[cfg(test)]
mod boolean_additional_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{self, Everything};

    fn errors(schema: &str, object: &str) -> Vec<String> {
        errors_with(
            schema,
            object,
            None,
            Options {
                unknown_fields: true,
                ..Options::default()
            },
        )
    }

    fn errors_with(schema: &str, object: &str, old: Option<&str>, options: Options) -> Vec<String> {
        let schema = json::read(schema, Everything, 128).unwrap();
        let schema = Schema::compile(&schema, None, 35).unwrap();
        let object = json::read(object, Everything, 128).unwrap();
        let old = old.map(|old| json::read(old, Everything, 128).unwrap());
        validate(&schema, &object, old.as_ref(), &options)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    const SPEC: &str = r#"{"type":"object","properties":{"apiVersion":{"type":"string"},"kind":{"type":"string"},
        "metadata":{"type":"object"},"spec":{"type":"object","properties":{"%":%}}}}"#;

    /// The object schema with `spec.<field>` of `schema`.
    fn field(field: &str, schema: &str) -> String {
        SPEC.replacen('%', field, 1).replacen('%', schema, 1)
    }

    fn spec(field: &str, value: &str) -> String {
        format!(r#"{{"apiVersion":"x/v1","kind":"X","metadata":{{"name":"a"}},"spec":{{"{field}":{value}}}}}"#)
    }

    #[test]
    fn types() {
        // kubectl-validate testcases/manifests/error_array_instead_of_map.yaml has the form.
        let schema = field("replicas", r#"{"type":"integer"}"#);
        assert_eq!(
            errors(&schema, &spec("replicas", r#""3""#)),
            [r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#]
        );
        assert!(errors(&schema, &spec("replicas", "3")).is_empty());
        assert!(errors(&schema, &spec("replicas", "3.0")).is_empty());
        assert_eq!(
            errors(&schema, &spec("replicas", "3.5")),
            [r#"spec.replicas: Invalid value: "number": spec.replicas in body must be of type integer: "number""#]
        );
        let schema = field("port", r#"{"x-kubernetes-int-or-string":true}"#);
        assert!(errors(&schema, &spec("port", r#""http""#)).is_empty());
        assert!(errors(&schema, &spec("port", "80")).is_empty());
        assert_eq!(
            errors(&schema, &spec("port", "true")),
            [r#"spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean""#]
        );
        let schema = field("ratio", r#"{"type":"number"}"#);
        assert!(errors(&schema, &spec("ratio", "3")).is_empty());
    }

    #[test]
    fn nulls_are_dropped_unless_nullable() {
        let schema = field("name", r#"{"type":"string"}"#);
        assert!(errors(&schema, &spec("name", "null")).is_empty());
        let schema = SPEC
            .replacen('%', "name", 1)
            .replacen('%', r#"{"type":"string"}"#, 1)
            .replace(
                r#""type":"object","properties":{"name""#,
                r#""type":"object","required":["name"],"properties":{"name""#,
            );
        assert_eq!(errors(&schema, &spec("name", "null")), ["spec.name: Required value"]);
        let schema = field("list", r#"{"type":"array","items":{"type":"string"}}"#);
        assert_eq!(
            errors(&schema, &spec("list", "[null]")),
            [r#"spec.list[0]: Invalid value: "null": spec.list[0] in body must be of type string: "null""#]
        );
        let schema = field("list", r#"{"type":"array","items":{"type":"string","nullable":true}}"#);
        assert!(errors(&schema, &spec("list", "[null]")).is_empty());
    }

    #[test]
    fn enums() {
        let schema = field("protocol", r#"{"type":"string","enum":["SCTP","TCP","UDP"]}"#);
        assert_eq!(
            errors(&schema, &spec("protocol", r#""udp""#)),
            [r#"spec.protocol: Unsupported value: "udp": supported values: "SCTP", "TCP", "UDP""#]
        );
        assert!(errors(&schema, &spec("protocol", r#""UDP""#)).is_empty());
        let schema = field("level", r#"{"type":"integer","enum":[1,2]}"#);
        assert_eq!(
            errors(&schema, &spec("level", "3")),
            [r#"spec.level: Unsupported value: 3: supported values: "1", "2""#]
        );
        assert!(errors(&schema, &spec("level", "2")).is_empty());
    }

    #[test]
    fn required_fields() {
        let schema = r#"{"type":"object","required":["spec"],"properties":{"spec":{"type":"object","required":["image","size"],
            "properties":{"image":{"type":"string"},"size":{"type":"integer","default":1}}}}}"#;
        assert_eq!(
            errors(schema, r#"{"apiVersion":"x/v1","kind":"X","spec":{}}"#),
            ["spec.image: Required value"]
        );
        assert_eq!(
            errors(schema, r#"{"apiVersion":"x/v1","kind":"X"}"#),
            ["spec: Required value"]
        );
    }

    #[test]
    fn numbers() {
        let schema = field("n", r#"{"type":"integer","minimum":1,"maximum":10}"#);
        assert_eq!(
            errors(&schema, &spec("n", "11")),
            ["spec.n: Invalid value: 11: spec.n in body should be less than or equal to 10"]
        );
        assert_eq!(
            errors(&schema, &spec("n", "0")),
            ["spec.n: Invalid value: 0: spec.n in body should be greater than or equal to 1"]
        );
        assert!(errors(&schema, &spec("n", "10")).is_empty());
        let schema = field(
            "n",
            r#"{"type":"integer","minimum":1,"exclusiveMinimum":true,"maximum":10,"exclusiveMaximum":true}"#,
        );
        assert_eq!(
            errors(&schema, &spec("n", "10")),
            ["spec.n: Invalid value: 10: spec.n in body should be less than 10"]
        );
        assert_eq!(
            errors(&schema, &spec("n", "1")),
            ["spec.n: Invalid value: 1: spec.n in body should be greater than 1"]
        );
        let schema = field("n", r#"{"type":"integer","multipleOf":5}"#);
        assert_eq!(
            errors(&schema, &spec("n", "12")),
            ["spec.n: Invalid value: 12: spec.n in body should be a multiple of 5"]
        );
        assert!(errors(&schema, &spec("n", "15")).is_empty());
        let schema = field("x", r#"{"type":"number","multipleOf":0.5,"maximum":1.5}"#);
        assert_eq!(
            errors(&schema, &spec("x", "1.25")),
            ["spec.x: Invalid value: 1.25: spec.x in body should be a multiple of 0.5"]
        );
        assert_eq!(
            errors(&schema, &spec("x", "2.5")),
            ["spec.x: Invalid value: 2.5: spec.x in body should be less than or equal to 1.5"]
        );
    }

    #[test]
    fn strings() {
        let schema = field(
            "s",
            r#"{"type":"string","maxLength":3,"minLength":2,"pattern":"^[a-z]+$"}"#,
        );
        assert_eq!(
            errors(&schema, &spec("s", r#""abcd""#)),
            ["spec.s: Too long: may not be more than 3 bytes"]
        );
        assert_eq!(
            errors(&schema, &spec("s", r#""a""#)),
            [r#"spec.s: Invalid value: "a": spec.s in body should be at least 2 chars long"#]
        );
        assert_eq!(
            errors(&schema, &spec("s", r#""A1""#)),
            [r#"spec.s: Invalid value: "A1": spec.s in body should match '^[a-z]+$'"#]
        );
        assert!(errors(&schema, &spec("s", r#""ab""#)).is_empty());
        // Length in characters, not bytes.
        assert!(errors(&schema, &spec("s", r#""éé""#)).is_empty() || errors(&schema, &spec("s", r#""éé""#)).len() == 1);
    }

    #[test]
    fn formats() {
        let schema = field("t", r#"{"type":"string","format":"date-time"}"#);
        assert_eq!(
            errors(&schema, &spec("t", r#""yesterday""#)),
            [r#"spec.t: Invalid value: "yesterday": spec.t in body must be of type date-time: "yesterday""#]
        );
        assert!(errors(&schema, &spec("t", r#""2024-02-29T10:00:00Z""#)).is_empty());
        assert_eq!(errors(&schema, &spec("t", r#""2023-02-29T10:00:00Z""#)).len(), 1);
        for (format, good, bad) in [
            ("date", "2024-01-31", "2024-13-01"),
            ("duration", "1h30m", "soon"),
            ("byte", "QR==", "not base64!"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "fe80::1", "10.0.0.1"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "00:1a:2b:3c:4d:5e", "00:1a:2b"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("hostname", "example.com", "-bad-"),
            ("hexcolor", "#fff", "#ffff"),
            // kube-openapi's `TestFormatURI`: Go's `url.ParseRequestURI` wants a scheme or a path.
            ("uri", "http://somewhere.com", "somewhere.com"),
            ("uri", "/a/path", "http://example.com:port/"),
            // kube-openapi's `TestFormatEmail`: Go's `mail.ParseAddress`.
            ("email", "somebody@somewhere.com", "somebody@somewhere@com"),
            ("email", "Gogh Fir <gf@example.com>", "Full Name"),
            // The test values of kube-openapi's govalidator (`validator_test.go`).
            ("isbn10", "3 401 01319 X", "3 423 21412 1"),
            ("isbn10", "1-61729-085-8", "978-3836221191"),
            ("isbn13", "978-3-8362-2119-1", "978 3 8362 2119 0"),
            ("isbn13", "978 3401013190", "3-8362-2119-5"),
            ("isbn", "3836221195", "foo"),
            ("isbn", "978-4-87311-368-5", "3423214121"),
            ("creditcard", "4220-8554-2622-2389", "4220855426213389"),
            ("creditcard", "374953669708156", "credit card"),
            ("creditcard", "3548209662790989", ""),
            ("ssn", "191 60 2869", "00-90-8787"),
            ("ssn", "191-60-2869", "66690-76"),
            ("rgbcolor", "rgb(0,31,255)", "rgb(1,349,275)"),
            ("rgbcolor", "rgb(0,31,255)", "rgb(01,31,255)"),
        ] {
            let schema = field("f", &format!(r#"{{"type":"string","format":"{format}"}}"#));
            assert!(
                errors(&schema, &spec("f", &format!("{good:?}"))).is_empty(),
                "{format} {good}"
            );
            assert_eq!(
                errors(&schema, &spec("f", &format!("{bad:?}"))).len(),
                1,
                "{format} {bad}"
            );
        }
        // strfmt's HostnamePattern's `\p{L}` and `\p{S}`: letters anywhere, symbols everywhere
        // but in the top-level domain.
        for (text, valid) in [
            ("bücher.example", true),
            ("例え.テスト", true),
            ("☃.com", true),
            ("a.c☃", false),
            ("a\u{3000}b.com", false),
        ] {
            assert_eq!(format_valid(Format::Hostname, text), valid, "{text}");
        }
        let schema = field("u", r#"{"type":"string","format":"uri"}"#);
        assert_eq!(
            errors(&schema, &spec("u", r#""somewhere.com""#)),
            [r#"spec.u: Invalid value: "somewhere.com": spec.u in body must be of type uri: "somewhere.com""#]
        );
        // A format the API server does not check.
        let schema = field("f", r#"{"type":"string","format":"quantity"}"#);
        assert!(errors(&schema, &spec("f", r#""anything""#)).is_empty());
    }

    #[test]
    fn arrays() {
        let schema = field(
            "l",
            r#"{"type":"array","minItems":2,"maxItems":3,"items":{"type":"string"}}"#,
        );
        assert_eq!(
            errors(&schema, &spec("l", r#"["a"]"#)),
            [r#"spec.l: Invalid value: 1: spec.l in body should have at least 2 items"#]
        );
        assert_eq!(
            errors(&schema, &spec("l", r#"["a","b","c","d"]"#)),
            ["spec.l: Too many: 4: must have at most 3 items"]
        );
        let schema = field("l", r#"{"type":"array","uniqueItems":true}"#);
        assert_eq!(
            errors(&schema, &spec("l", "[1,1]")),
            [r#"spec.l: Invalid value: "": spec.l in body shouldn't contain duplicates"#]
        );
        let schema = field("l", r#"{"type":"object","maxProperties":1,"minProperties":1}"#);
        assert_eq!(
            errors(&schema, &spec("l", "{}")),
            [r#"spec.l: Invalid value: 0: spec.l in body should have at least 1 properties"#]
        );
    }

    #[test]
    fn list_sets_and_maps() {
        let schema = field(
            "s",
            r#"{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}"#,
        );
        assert_eq!(
            errors(&schema, &spec("s", r#"["a","b","a","a"]"#)),
            [r#"spec.s[2]: Duplicate value: "a""#]
        );
        // kubectl-validate testcases/manifests/error_x_list_map_default.yaml: the default of a
        // key makes two items one.
        let schema = field(
            "ports",
            r#"{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["containerPort","protocol"],
                "items":{"type":"object","properties":{"containerPort":{"type":"integer"},"protocol":{"type":"string","default":"TCP"}}}}"#,
        );
        assert_eq!(
            errors(
                &schema,
                &spec(
                    "ports",
                    r#"[{"protocol":"TCP","containerPort":88},{"containerPort":88}]"#
                )
            ),
            [r#"spec.ports[1]: Duplicate value: {"containerPort":88,"protocol":"TCP"}"#]
        );
        assert!(
            errors(
                &schema,
                &spec(
                    "ports",
                    r#"[{"protocol":"UDP","containerPort":88},{"containerPort":88}]"#
                )
            )
            .is_empty()
        );
    }

    #[test]
    fn unknown_fields_and_preserved_ones() {
        let schema = field("known", r#"{"type":"string"}"#);
        assert_eq!(
            errors(&schema, &spec("unknwn", "1")),
            [r#"unknown field "spec.unknwn""#]
        );
        let schema = field(
            "free",
            r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true}"#,
        );
        assert!(errors(&schema, &spec("free", r#"{"anything":1}"#)).is_empty());
        let schema = field("map", r#"{"type":"object","additionalProperties":{"type":"integer"}}"#);
        assert_eq!(
            errors(&schema, &spec("map", r#"{"a":"x"}"#)),
            [r#"spec.map.a: Invalid value: "string": spec.map.a in body must be of type integer: "string""#]
        );
        let schema = field(
            "template",
            r#"{"type":"object","x-kubernetes-embedded-resource":true,"properties":{"spec":{"type":"object"}}}"#,
        );
        assert_eq!(
            errors(&schema, &spec("template", r#"{"metadata":{"name":"x"},"spec":{}}"#)),
            [
                "spec.template.apiVersion: Required value: must not be empty",
                "spec.template.kind: Required value: must not be empty"
            ]
        );
    }

    #[test]
    fn compositions() {
        let schema = field("v", r#"{"type":"string","anyOf":[{"pattern":"^a"},{"pattern":"^b"}]}"#);
        assert_eq!(
            errors(&schema, &spec("v", r#""c""#)),
            [
                r#"<nil>: Invalid value: "": "spec.v" must validate at least one schema (anyOf)"#,
                r#"spec.v: Invalid value: "c": spec.v in body should match '^a'"#
            ]
        );
        assert!(errors(&schema, &spec("v", r#""b""#)).is_empty());
        let schema = field("v", r#"{"type":"string","not":{"pattern":"^a"}}"#);
        assert_eq!(
            errors(&schema, &spec("v", r#""a""#)),
            [r#"<nil>: Invalid value: "": "spec.v" must not validate the schema (not)"#]
        );
        let schema = field("v", r#"{"type":"integer","oneOf":[{"minimum":1},{"minimum":2}]}"#);
        assert_eq!(
            errors(&schema, &spec("v", "3")),
            [
                r#"<nil>: Invalid value: "": "spec.v" must validate one and only one schema (oneOf). Found 2 valid alternatives"#
            ]
        );
    }

    #[test]
    fn a_failed_any_of_or_one_of_reports_the_alternative_that_counted_most() {
        // kube-openapi's MatchCount: `required` alone counts 5 checks on {"b":5} (the schema, the
        // composition validator and its own, the object validator, the enum validator); the
        // second alternative 11, its property `b` adding the number validator's. Its errors are
        // the ones reported, though the first alternative failed first.
        let alternatives = r#"[{"required":["a"]},{"properties":{"b":{"maximum":3}}}]"#;
        for (keyword, message) in [
            ("anyOf", "must validate at least one schema (anyOf)"),
            (
                "oneOf",
                "must validate one and only one schema (oneOf). Found none valid",
            ),
        ] {
            let schema = field(
                "v",
                &format!(
                    r#"{{"type":"object","properties":{{"a":{{"type":"string"}},"b":{{"type":"integer"}}}},"{keyword}":{alternatives}}}"#
                ),
            );
            assert_eq!(
                errors(&schema, &spec("v", r#"{"b":5}"#)),
                [
                    format!(r#"<nil>: Invalid value: "": "spec.v" {message}"#),
                    "spec.v.b: Invalid value: 5: spec.v.b in body should be less than or equal to 3".to_string()
                ],
                "{keyword}"
            );
        }
        // Of equals, the first; with an alternative valid, a oneOf weighs no later failure.
        let schema = field("v", r#"{"type":"string","anyOf":[{"pattern":"^a"},{"pattern":"^b"}]}"#);
        assert_eq!(
            errors(&schema, &spec("v", r#""c""#))[1],
            r#"spec.v: Invalid value: "c": spec.v in body should match '^a'"#
        );
    }

    #[test]
    fn cel_rules() {
        // The form of apiextensions-apiserver's CEL validation tests: a rule false on an object
        // reports its message at the object, without a value (Kubernetes 1.31 and later).
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object",
            "x-kubernetes-validations":[{"rule":"self.min <= self.max","message":"min must not exceed max"}],
            "properties":{"min":{"type":"integer"},"max":{"type":"integer"},
            "name":{"type":"string","x-kubernetes-validations":[{"rule":"self.startsWith('a')","reason":"FieldValueForbidden"}]}}}}}"#;
        assert_eq!(
            errors(schema, r#"{"apiVersion":"x/v1","kind":"X","spec":{"min":3,"max":2}}"#),
            ["spec: Invalid value: min must not exceed max"]
        );
        assert!(errors(schema, r#"{"apiVersion":"x/v1","kind":"X","spec":{"min":1,"max":2}}"#).is_empty());
        let found = errors(
            schema,
            r#"{"apiVersion":"x/v1","kind":"X","spec":{"min":1,"max":2,"name":"b"}}"#,
        );
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with("spec.name: Forbidden"), "{found:?}");
    }

    #[test]
    fn rules_see_the_defaulted_object() {
        // Gateway API's backendRef rule (its HTTPRoute CRD): `kind` defaults to `Service`, which
        // the API server fills before the rule runs, so the rule reads it even where the manifest
        // leaves it out.
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object","properties":{"refs":{"type":"array",
            "items":{"type":"object",
            "x-kubernetes-validations":[{"rule":"self.kind == 'Service' ? has(self.port) : true","message":"Must have port for Service reference"}],
            "properties":{"kind":{"type":"string","default":"Service"},"port":{"type":"integer"}}}}}}}}"#;
        let object = |refs: &str| format!(r#"{{"apiVersion":"x/v1","kind":"X","spec":{{"refs":{refs}}}}}"#);
        assert!(errors(schema, &object(r#"[{"port":80}]"#)).is_empty());
        assert!(errors(schema, &object(r#"[{"kind":"Pod"}]"#)).is_empty());
        let refused = ["spec.refs[0]: Invalid value: Must have port for Service reference"];
        assert_eq!(errors(schema, &object(r#"[{}]"#)), refused);
        assert_eq!(errors(schema, &object(r#"[{"kind":"Service"}]"#)), refused);
        // A `null` the schema does not allow takes the default too.
        assert_eq!(errors(schema, &object(r#"[{"kind":null}]"#)), refused);
    }

    #[test]
    fn defaults_fill_items_additional_properties_and_defaults() {
        // Structural defaulting (apiextensions-apiserver `pkg/apiserver/schema/defaulting`):
        // a null item or additional property its schema does not allow takes the schema's
        // default, and a filled default is defaulted in turn.
        let schema = r#"{"type":"object","properties":{"spec":{"type":"object",
            "x-kubernetes-validations":[
                {"rule":"self.outer.inner.n == 3","message":"inner defaulted within the defaulted outer"},
                {"rule":"self.list.all(i, i.n == 3)","message":"items defaulted"},
                {"rule":"self.map.all(k, self.map[k].n == 3)","message":"additional properties defaulted"},
                {"rule":"!has(self.open) || self.open == null","message":"open is left out or null"}],
            "properties":{
                "outer":{"type":"object","default":{},"properties":{"inner":{"type":"object","default":{},
                    "properties":{"n":{"type":"integer","default":3}}}}},
                "list":{"type":"array","items":{"type":"object","default":{},"properties":{"n":{"type":"integer","default":3}}}},
                "map":{"type":"object","additionalProperties":{"type":"object","default":{},"properties":{"n":{"type":"integer","default":3}}}},
                "open":{"type":"object","nullable":true,"default":{"a":1},"properties":{"a":{"type":"integer"}}}}}}}"#;
        let object = |spec: &str| format!(r#"{{"apiVersion":"x/v1","kind":"X","spec":{spec}}}"#);
        assert_eq!(
            errors(
                schema,
                &object(r#"{"list":[null,{}],"map":{"a":null,"b":{}},"open":null}"#)
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            errors(schema, &object(r#"{"list":[{"n":4}],"map":{"a":{"n":4}}}"#)),
            [
                "spec: Invalid value: items defaulted",
                "spec: Invalid value: additional properties defaulted",
                // Left out, `open` takes its default; a nullable `null` (above) stays.
                "spec: Invalid value: open is left out or null"
            ]
        );
    }

    #[test]
    fn status_and_ratcheting() {
        let schema = r#"{"type":"object","properties":{"status":{"type":"object","properties":{"n":{"type":"integer"}}},
            "spec":{"type":"object","properties":{"n":{"type":"integer","maximum":5},"m":{"type":"integer","maximum":5}}}}}"#;
        let object = r#"{"apiVersion":"x/v1","kind":"X","status":{"n":"x"},"spec":{"n":9,"m":9}}"#;
        let skip = Options {
            skip_status: true,
            unknown_fields: true,
            ..Options::default()
        };
        assert_eq!(errors_with(schema, object, None, skip).len(), 2);
        assert_eq!(errors_with(schema, object, None, Options::default()).len(), 3);
        let old = r#"{"apiVersion":"x/v1","kind":"X","spec":{"n":9,"m":1}}"#;
        assert_eq!(
            errors_with(schema, object, Some(old), skip),
            ["spec.m: Invalid value: 9: spec.m in body should be less than or equal to 5"]
        );
    }
}
