//! A CustomResourceDefinition's own validation, the part of apiextensions-apiserver's
//! `ValidateCustomResourceDefinition` (`pkg/apis/apiextensions/validation/validation.go`) a
//! manifest meets and that is certain offline. For each `openAPIV3Schema`, in the order
//! `validateCustomResourceDefinitionValidation` gives them:
//! - where the version (or, for a schema every version shares, any version) has the status
//!   subresource, a root of a type other than `object` or with a field the subresource forbids
//!   there (`only [Description Type ...] fields are allowed at the root of the schema if the
//!   status subresource is enabled`, the root printed as Go marshals the internal type:
//!   [`status_root`]);
//! - a `nullable` root ("nullable cannot be true at the root");
//! - the structural schema's rules (`pkg/apiserver/schema/validation.go`, `ValidateStructural`,
//!   sorted by their text as it sorts them), when the CRD prunes (`preserveUnknownFields` not
//!   true; no update relaxes them then) and `NewStructural` (`schema/convert.go`) converts the
//!   schema: a `type` for the root, every specified field and array item (unless
//!   `x-kubernetes-int-or-string` or `x-kubernetes-preserve-unknown-fields`), `items` for every
//!   array, an `object` root without `additionalProperties`, a `string` `kind` and `apiVersion`
//!   and an `object` `metadata` at the root and in embedded resources, a root `metadata` that
//!   says no more than `name` and `generateName`, `x-kubernetes-embedded-resource` on objects
//!   with properties (or preserving unknown fields) and without `additionalProperties`, neither it
//!   nor `x-kubernetes-preserve-unknown-fields` beside `x-kubernetes-int-or-string`; and under
//!   `anyOf`, `allOf`, `oneOf` and `not` (`validateNestedValueValidation`), no type, default,
//!   title, description, `nullable`, extension, CEL rule or `metadata` (int-or-string's `anyOf`
//!   pattern excepted); and, sorted with them, `validateStructuralCompleteness`
//!   (`schema/complete.go`, [`completeness`]): a field or `items` a value validation of the root
//!   names that the schema itself does not declare (`...properties[foo]: Required value: because
//!   it is defined in ...allOf[0].properties[foo]`);
//! - each schema's keywords as `ValidateCustomResourceDefinitionOpenAPISchema` checks them, a
//!   schema's own before those of the schemas it holds, its extensions after them: a `type` none
//!   of OpenAPI v3's (`field.NotSupported`) or `null`; a `default` in the root's `metadata`,
//!   `kind` or `apiVersion` or in `additionalProperties` under them; `id`, `additionalItems`,
//!   `patternProperties`, `definitions`, `dependencies` and `$ref` ("is not supported"); a list
//!   of `items`; `x-kubernetes-embedded-resource` inside resource meta; `uniqueItems: true`
//!   ("the runtime complexity becomes quadratic"); `additionalProperties` (`false` or a schema)
//!   beside `properties`; `x-kubernetes-preserve-unknown-fields: false`; an
//!   `x-kubernetes-map-type` on a schema not of type `object`, or other than `atomic` or
//!   `granular`; an `x-kubernetes-list-type` on a schema not of type `array`, or other than
//!   `atomic`, `set` or `map`; a `set` of maps or lists that are not atomic
//!   (`requireAtomicSetType`); `x-kubernetes-list-map-keys` without a `map` list; a `map` list
//!   without keys, without an `items` schema, of items not of type `object`, or with keys that are
//!   not the items' properties, repeat or are not scalars; `nullable` items of a `set` or `map`
//!   list and a `map` list's key that is `nullable` or neither required nor defaulted
//!   (`validateMapListKeysMapSet`);
//! - a schema `NewStructural` cannot convert for a reason none of the above says (`$schema`):
//!   `spec.validation.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not
//!   supported`, which the API server gives only when the schema has no other error; said only
//!   when it is the root's own or the schema's one such reason (Go's walk meets properties in
//!   random order), and not beside CEL rules (whose keyword errors are not checked here).
//!
//! Each message is validation.go's, schema/validation.go's or convert.go's, with the values
//! they print (the source passes the items' `x-kubernetes-list-type` as the value of a `set`
//! whose object items are not atomic, `null` when unset, and the items' type as that of a
//! non-scalar key); kubectl-validate (Kubernetes 1.35) gives the same on the rule table's CRDs.
//!
//! The API server validates the CRD in its internal version, into which
//! `Convert_v1_CustomResourceDefinitionSpec_To_apiextensions_CustomResourceDefinitionSpec`
//! (`pkg/apis/apiextensions/v1/conversion.go`) hoists a schema every version shares to
//! `spec.validation`: the error's path is then `spec.validation.openAPIV3Schema...`, and
//! `spec.versions[i].schema.openAPIV3Schema...` where the versions' schemas differ. The finding
//! is located at the field in the manifest, under `spec.versions[i]` either way.
//!
//! On an update, three rules are off when the old CRD already broke them, as
//! `ValidateCustomResourceDefinitionUpdate` sets its options ("don't tighten validation on
//! existing persisted data"): the types (`requireValidPropertyType`), the `set` and `map`
//! lists' items and keys (`requireMapListKeysMapSetValidation`) and the atomic items of a `set`
//! (`requireAtomicSetType`); the others hold on every write.
//!
//! - a `pattern` Go's `regexp` refuses (`validateValueValidation`, among the structural schema's
//!   rules): ``...pattern: Invalid value: "(?=x)": must be a valid regular expression, but isn't:
//!   error parsing regexp: invalid or unsupported Perl syntax: `(?=` ``, said where
//!   `schema::go_regex_error` is certain of Go's parser's first error (lookarounds, backreferences
//!   and other invalid escapes, missing brackets and parentheses, invalid repeat counts, `x**`,
//!   `(?x)`...; not a Unicode class's name), which our reader (`schema::go_regex`, from the same
//!   reading of the pattern) then refuses too;
//! - each `default` (`ValidateDefaults`, `pkg/apiserver/schema/defaulting/validation.go`), when
//!   the structural schema has no error: on its own schema node (properties and items, not
//!   `additionalProperties`), with the validator of custom resources (`validate::validate_default`)
//!   run with `<path>.default` as the field and the default as the root, so kube-openapi's name is
//!   the path inside the default, empty for a scalar (`...properties[replicas].default: Invalid
//!   value: 5:  in body should be less than or equal to 3`, two spaces; `...default.port: Invalid
//!   value: 20: port in body should be less than or equal to 10`; `...default: Unsupported value:
//!   "c": supported values: "a", "b"`; `...default.port: Required value`, the default not being
//!   defaulted itself); a default the schema prunes (`...default: Invalid value:
//!   {"extra":1,"port":2}: must not have unknown fields`) unless the old CRD of an update already
//!   had one (`requirePrunedDefaults`); the CEL rules of its node and below only when its schema
//!   found nothing. A default of an embedded resource, or holding one, has each embedded
//!   resource's `apiVersion` and `kind` coerced and validated first, as `objectmeta.Coerce` and
//!   `objectmeta.Validate` do (`...default.apiVersion: Required value`, `...default.kind: Invalid
//!   value: "": must not be empty`; [`embedded_defaults`]), and nothing more said of it when they
//!   refuse. Not said: a default in a resource's `metadata`, `kind` or `apiVersion` (validated in
//!   a surrounding object the API server builds), one reaching an embedded resource with
//!   `metadata` (decoded into `ObjectMeta`, rewritten and validated by `ValidateObjectMeta`) or
//!   with CEL rules of its own, one that reaches a CEL rule reading `oldSelf` (run with the
//!   default as `oldSelf`, and again without it: CRDValidationRatcheting, on since 1.30), or a
//!   rule that does not compile. The defaults'
//!   rules share one CEL cost budget per schema (10,000,000, `ValidateDefaults`), charged only
//!   where they run (not for a default kube-openapi refused) and spent in the order of the walk
//!   (a node's own default, its `items`', its properties'); the API server takes the properties
//!   in Go's map order, which changes between runs, and judges no default once a rule has run
//!   out of the budget (or past the per-call limit). Here they are taken in the manifest's order:
//!   while the budget holds, the order changes nothing (each default's cost is its own), so every
//!   default is judged as the API server judges it; once a rule spends it, that default and every
//!   later one say nothing, since which defaults the API server reaches first, and where it runs
//!   out, depend on its order (it then refuses the CRD with `validation failed due to running out
//!   of cost budget, ...` at a default of its order, never said here). So nothing is said where
//!   an order of the API server accepts: the errors of the defaults judged before the budget ran
//!   out are those of the orders that reach them first, and an order that runs out first refuses
//!   the CRD too, with its own message.
//!
//! On an update, `requirePrunedDefaults` reads the old CRD's defaults as
//! `schemaHasUnprunedDefaults` does: pruned against their schema
//! ([`validate::default_is_pruned`]), nothing validated and no CEL rule run or compiled; a default
//! in a resource's metadata or of an embedded resource (which the API server coerces first)
//! counts as unpruned, which only relaxes the rule.
//!
//! Only what is certain is said: a value whose decoded Go form is in doubt (an empty list or
//! map where Go's comparison tells nil from empty, in the root `metadata`) does not count, and an
//! `anyOf` of an `integer` and a `string` schema is taken for int-or-string's pattern whatever
//! else they hold. The CEL rules (`x-kubernetes-validations`) are [`super::crd_rules`]'s: their
//! keywords among each schema's keywords, after its list and map keywords, and, when the
//! structural schema and its defaults hold, their compilation, `oldSelf` and estimated cost
//! after the schema's errors, then the schema's total cost. Not checked: a `map` list whose
//! `items` is a list ("must only have a single schema", whose value prints the internal type),
//! and the validator built from the schema at the end ("error building validator").
//!
//! Nothing here is crd-schema-fields' (a schema keyword the API server drops or a CRD that does
//! not round-trip: `$ref`, `definitions` and the others above are JSONSchemaProps fields, which
//! it does not report) or crd-safe-upgrade's (a change between two versions of a CRD).

mod completeness;
#[cfg(test)]
mod defaults_tests;
mod embedded_defaults;
mod status_root;

use super::cel::cost::Budget;
use super::field_error::{BadValue, FieldError, go_json};
use super::schema::{Schema, go_regex_error};
use super::validate;
use crate::json::Node;

/// The members of apiextensions' JSONSchemaProps: a schema's other keys are dropped when the API
/// server decodes the CRD (crd-schema-fields' findings). Listed here rather than read from the
/// generated API tables, which the module would otherwise link only for this (a unit test holds
/// the two equal).
const SCHEMA_KEYS: [&str; 44] = [
    "$ref",
    "$schema",
    "additionalItems",
    "additionalProperties",
    "allOf",
    "anyOf",
    "default",
    "definitions",
    "dependencies",
    "description",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "externalDocs",
    "format",
    "id",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "not",
    "nullable",
    "oneOf",
    "pattern",
    "patternProperties",
    "properties",
    "required",
    "title",
    "type",
    "uniqueItems",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];

/// The types a CRD schema may name (`openapiV3Types`), sorted as `sets.String.List` gives them.
const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

/// Which of the rules that an update relaxes apply (`validationOptions`).
#[derive(Clone, Copy)]
struct Options {
    /// `requireValidPropertyType`.
    valid_property_type: bool,
    /// `requireMapListKeysMapSetValidation`.
    map_list_keys_map_set: bool,
    /// `requireAtomicSetType`.
    atomic_set_type: bool,
    /// The rules no update relaxes.
    always: bool,
    /// The Kubernetes minor version, for the defaults' formats.
    minor: u32,
    /// `requirePrunedDefaults`.
    pruned_defaults: bool,
}

/// What `specStandardValidatorV3` carries down the schema: whether defaults are forbidden (and
/// why) and whether the schema applies to an object's `metadata`, `kind` or `apiVersion`.
#[derive(Clone, Default)]
struct Place {
    /// The schema is the root (`isRoot`).
    root: bool,
    /// `isInsideResourceMeta`.
    inside_meta: bool,
    /// `disallowDefaultsReason`, when defaults are not allowed.
    no_defaults: Option<String>,
}

/// The errors the API server gives `crd` (a CustomResourceDefinition of
/// `apiextensions.k8s.io/v1`), `old` the CRD it replaces on an update.
/// `minor` the Kubernetes minor version (the formats its defaults are checked against).
pub fn validate(crd: &Node<'_>, old: Option<&Node<'_>>, minor: u32) -> Vec<FieldError> {
    let options = Options {
        valid_property_type: !old.is_some_and(|old| any_schema_breaks(old, Rule::PropertyType)),
        map_list_keys_map_set: !old.is_some_and(|old| any_schema_breaks(old, Rule::MapListKeysMapSet)),
        atomic_set_type: !old.is_some_and(|old| any_schema_breaks(old, Rule::AtomicSetType)),
        always: true,
        minor,
        // `requirePrunedDefaults`: off on an update of a CRD that already had a pruned default.
        pruned_defaults: !old.is_some_and(|old| has_unpruned_default(old, minor)),
    };
    // `requireStructuralSchema`: a v1 CRD that prunes (`preserveUnknownFields` false or unset;
    // `validateCustomResourceDefinitionSpec` then requires it whatever the old CRD was).
    let structural = crd.at(&["spec", "preserveUnknownFields"]).and_then(Node::as_bool) != Some(true);
    let mut errors = Vec::new();
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return errors;
    };
    // `findPreexistingExpressions`: the old CRD's rules compile with every library.
    let preexisting = old.map(super::crd_rules::expressions).unwrap_or_default();
    // `apiequality.Semantic.DeepEqual` of every version's `schema` with the first's.
    let first = versions.first().and_then(schema_of);
    let hoisted = versions.iter().all(|v| match (schema_of(v), first) {
        (Some(a), Some(b)) => same(a, b),
        (None, None) => true,
        _ => false,
    });
    for (i, version) in versions.iter().enumerate() {
        let Some(schema) = schema_of(version).and_then(|s| s.get("openAPIV3Schema")) else {
            continue;
        };
        let at = format!("spec.versions[{i}].schema.openAPIV3Schema");
        let status = if hoisted {
            versions.iter().any(status_enabled)
        } else {
            status_enabled(version)
        };
        let path = if hoisted {
            // One schema, validated once, at the path of the internal version.
            if i > 0 {
                continue;
            }
            "spec.validation.openAPIV3Schema"
        } else {
            &at
        };
        if let Some(walked) = root(schema, (path, &at), options, (structural, status), &mut errors) {
            // `findVersionsWithUnchangedSchemas`: the old CRD's schema for the version's name.
            let name = version.get("name").and_then(Node::as_str);
            let unchanged = old.and_then(|old| old.at(&["spec", "versions"])).is_some_and(|old| {
                matches!(old, Node::Array(olds) if olds.iter().any(|o| {
                    o.get("name").and_then(Node::as_str) == name
                        && o.at(&["schema", "openAPIV3Schema"]).is_some_and(|s| same(s, schema))
                }))
            });
            let how = super::crd_rules::Compilation {
                minor,
                preexisting: &preexisting,
                schema_errors: &errors[walked..],
                unchanged,
            };
            let compiled = super::crd_rules::compilation(schema, path, &at, &how);
            errors.extend(compiled);
        }
    }
    // Kubernetes before 1.30 is built with Go before 1.22, whose parser did not know `(?<name>`:
    // there a `(?<` is `invalid or unsupported Perl syntax`, a message not followed here.
    if minor < 30 {
        errors.retain(|error| {
            !(error.detail.starts_with("must be a valid regular expression")
                && matches!(&error.value, BadValue::Str(pattern) if pattern.contains("(?<")))
        });
    }
    errors
}

/// The errors of one `openAPIV3Schema`, in the order `validateCustomResourceDefinitionValidation`
/// gives them: a `nullable` root, the structural schema's (`ValidateStructural`, sorted), the
/// keywords' (`ValidateCustomResourceDefinitionOpenAPISchema`), and the schema that cannot be
/// made structural only when nothing else is said. When the CEL rules are compiled (the
/// structural schema and its defaults have no error: `celContext`), where the keywords' errors
/// start in `errors`.
fn root(
    schema: &Node<'_>,
    (path, at): (&str, &str),
    options: Options,
    (structural, status): (bool, bool),
    errors: &mut Vec<FieldError>,
) -> Option<usize> {
    let before = errors.len();
    let mut cel_context = false;
    if status {
        errors.extend(status_root::check(schema, path, at));
    }
    if schema.get("nullable").and_then(Node::as_bool) == Some(true) {
        let error = FieldError::forbidden(format!("{path}.nullable"), "nullable cannot be true at the root");
        errors.push(at_step(error, at, ".nullable"));
    }
    let converts = converts(schema);
    if structural && converts {
        let mut found = Vec::new();
        invariants(schema, Level::Root, path, at, &mut found);
        completeness::check(schema, path, at, &mut found);
        found.sort_by_cached_key(ToString::to_string);
        if found.is_empty() {
            let defaulted = errors.len();
            let spent = defaults(schema, path, at, options, errors);
            cel_context = errors.len() == defaulted && !spent;
        }
        errors.extend(found);
    }
    let place = Place {
        root: true,
        ..Place::default()
    };
    let walked = errors.len();
    walk(schema, path, at, options, &place, errors);
    // `structuralSchemaInitErrs`: said only when nothing else is. The unsupported keywords
    // `specStandardValidatorV3` also forbids never get here; `$schema` is the one it does not.
    // Said for the root's own offence (`NewStructural` meets it first) or a single offence
    // (Go's walk meets map keys in random order), and not beside CEL rules (whose keyword errors
    // are not checked here). With the status subresource, the root's own fields are refused
    // first ([`status_root`]).
    if structural && !converts && errors.len() == before && !has_validations(schema) {
        let mut offences = Vec::new();
        unconvertible(schema, at, &mut offences);
        if let [(message, offence_at), ..] = offences.as_slice()
            && (offences.len() == 1 || offence_at == at)
        {
            let mut error = FieldError::invalid(path.to_string(), BadValue::Str(String::new()), message.clone());
            error.at = offence_at.clone();
            errors.push(error);
        }
    }
    cel_context.then_some(walked)
}

/// Whether a version has the status subresource (`hasStatusEnabled`; a hoisted schema has it when
/// any version has, `hasAnyStatusEnabled`).
fn status_enabled(version: &Node<'_>) -> bool {
    version
        .at(&["subresources", "status"])
        .is_some_and(|status| !status.is_null())
}

/// A `default` of a schema as `ValidateDefaults` meets it: its schema node (in the compiled
/// sub-schema `slot` and as written), where the node is (as the API server names it, and in the
/// manifest), and whether `ValidateDefaults` judges it as a resource's metadata or the resource
/// itself (not judged here).
struct DefaultAt<'n, 'j> {
    slot: usize,
    index: usize,
    default: &'n Node<'j>,
    path: String,
    at: String,
    meta: bool,
}

/// Every non-null `default` of `schema`, in the order `ValidateDefaults` recurses: a node's own,
/// then its `items`', then its properties' (not `additionalProperties`, where defaults are not
/// followed). `resource` when the node is a resource (the root, an embedded resource), `meta`
/// when it is inside a resource's `metadata`, `kind` or `apiVersion`. Only what a default is
/// validated against is compiled: the sub-schema of each topmost default, alone (or the whole
/// schema when the root has one), pushed to `compiled`; `here` is the node's slot there and its
/// index, once under a default. None when a sub-schema does not compile (no default judged).
#[allow(clippy::too_many_arguments)]
fn each_default<'n, 'j>(
    compiled: &mut Vec<Schema>,
    here: Option<(usize, usize)>,
    schema: &'n Node<'j>,
    (path, at): (&str, &str),
    (resource, meta): (bool, bool),
    minor: u32,
    root: bool,
    out: &mut Vec<DefaultAt<'n, 'j>>,
) -> Option<()> {
    let default = schema.get("default").filter(|d| !d.is_null());
    let here = match here {
        None if default.is_some() => {
            let sub = if root {
                Schema::compile(schema, None, minor)
            } else {
                Schema::compile_detached(schema, minor)
            };
            let sub = sub.ok()?;
            compiled.push(sub);
            let slot = compiled.len() - 1;
            Some((slot, compiled[slot].root))
        }
        here => here,
    };
    let node = here.map(|(slot, index)| compiled[slot].node(index));
    let embedded = node.map_or_else(
        || flag(schema, "x-kubernetes-embedded-resource"),
        |node| node.embedded_resource,
    );
    let (items_at, property_at) = match node {
        Some(node) => (node.items, Some(node)),
        None => (None, None),
    };
    let property_at = property_at.map(|node| {
        let slot = here.map_or(0, |(slot, _)| slot);
        move |key: &str| node.property(key).map(|index| (slot, index))
    });
    let items_at = here.zip(items_at).map(|((slot, _), index)| (slot, index));
    let resource = resource || embedded;
    let meta = meta && !embedded;
    if let (Some(default), Some((slot, index))) = (default, here) {
        out.push(DefaultAt {
            slot,
            index,
            default,
            path: path.to_string(),
            at: at.to_string(),
            // The root's own default is judged as a resource's (not here); an embedded
            // resource's is ([`embedded_defaults`]).
            meta: meta || (resource && !embedded),
        });
    }
    // Under a default, the children its compiled node has (as before); above, every child.
    let items = (here.is_none() || items_at.is_some())
        .then(|| items_schema(schema))
        .flatten();
    let properties: Vec<_> = schema
        .get("properties")
        .and_then(Node::as_object)
        .unwrap_or_default()
        .iter()
        .filter_map(|(key, value)| match &property_at {
            Some(find) => find(key).map(|child| (key, value, Some(child))),
            None => Some((key, value, None)),
        })
        .collect();
    if let Some(items) = items {
        let (p, a) = (format!("{path}.items"), format!("{at}.items"));
        each_default(compiled, items_at, items, (&p, &a), (false, meta), minor, false, out)?;
    }
    for (key, value, child) in properties {
        let (p, a) = (format!("{path}.properties[{key}]"), format!("{at}.properties[{key}]"));
        let meta = meta || (resource && matches!(key.as_ref(), "metadata" | "kind" | "apiVersion"));
        each_default(compiled, child, value, (&p, &a), (false, meta), minor, false, out)?;
    }
    Some(())
}

/// Whether a schema holds a `default` anywhere.
fn has_default(schema: &Node<'_>) -> bool {
    match schema {
        Node::Object(entries) => entries
            .iter()
            .any(|(key, value)| (key == "default" && !value.is_null()) || has_default(value)),
        Node::Array(items) => items.iter().any(has_default),
        _ => false,
    }
}

/// Every default of `schema` and the sub-schemas compiled for them ([`each_default`]); none
/// when it has none or one does not compile.
fn compiled_for_defaults<'n, 'j>(
    schema: &'n Node<'j>,
    (path, at): (&str, &str),
    minor: u32,
) -> Option<(Vec<Schema>, Vec<DefaultAt<'n, 'j>>)> {
    if !has_default(schema) {
        return None;
    }
    let (mut compiled, mut found) = (Vec::new(), Vec::new());
    each_default(
        &mut compiled,
        None,
        schema,
        (path, at),
        (true, false),
        minor,
        true,
        &mut found,
    )?;
    Some((compiled, found))
}

/// `ValidateDefaults` on one structural schema: each default validated against its own node,
/// with kube-openapi's validator (the custom resources' validator, [`validate::validate_default`])
/// at `<node>.default`; a default it cannot judge with certainty, or in a resource's metadata
/// (which the API server coerces into `ObjectMeta` first), says nothing.
/// Returns whether a rule spent the defaults' budget: the API server then refuses a default (where
/// depends on Go's map order), unsaid here, and so compiles no rule after them.
fn defaults(schema: &Node<'_>, path: &str, at: &str, options: Options, errors: &mut Vec<FieldError>) -> bool {
    let Some((compiled, found)) = compiled_for_defaults(schema, (path, at), options.minor) else {
        return false;
    };
    // One CEL budget for the schema's defaults, as `ValidateDefaults` shares it: once a rule
    // spends it, no default after is judged (module doc).
    let mut budget = Budget::default();
    for entry in found.iter().filter(|entry| !entry.meta) {
        if budget.stopped() {
            break;
        }
        let Some(defaults_errors) = judge_default(&compiled[entry.slot], entry, options.pruned_defaults, &mut budget)
        else {
            continue;
        };
        for mut error in defaults_errors {
            // Located in the manifest: the same steps under the node's place.
            error.at = format!(
                "{}{}",
                entry.at,
                error.at.strip_prefix(entry.path.as_str()).unwrap_or("")
            );
            errors.push(error);
        }
    }
    budget.stopped()
}

/// One default's errors as `ValidateDefaults` gives them, `None` when not certain: whether it is
/// pruned, then the object-meta steps on the embedded resources it reaches
/// ([`embedded_defaults`]), then kube-openapi's validator and the CEL rules
/// ([`validate::validate_default`]).
fn judge_default(
    compiled: &Schema,
    entry: &DefaultAt<'_, '_>,
    require_pruned: bool,
    budget: &mut Budget,
) -> Option<Vec<FieldError>> {
    use embedded_defaults::Meta;
    match embedded_defaults::judge(compiled, entry.index, entry.default, &entry.path) {
        Meta::Uncertain => None,
        Meta::Clean => validate::validate_default(
            compiled,
            entry.index,
            entry.default,
            &entry.path,
            (require_pruned, true),
            budget,
        ),
        Meta::Refused(meta_errors) => {
            let mut errors = Vec::new();
            if require_pruned && validate::default_is_pruned(compiled, entry.index, entry.default, true)? {
                errors.push(FieldError::invalid(
                    format!("{}.default", entry.path),
                    BadValue::Json(go_json(entry.default)),
                    "must not have unknown fields",
                ));
            }
            errors.extend(meta_errors);
            Some(errors)
        }
    }
}

/// `!requirePrunedDefaults(old)`: whether a default of `crd`'s schemas (structural ones) is
/// pruned, or cannot be told not to be.
fn has_unpruned_default(crd: &Node<'_>, minor: u32) -> bool {
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return false;
    };
    versions.iter().any(|version| {
        let Some(schema) = version.at(&["schema", "openAPIV3Schema"]) else {
            return false;
        };
        let mut broken = Vec::new();
        if !converts(schema) {
            return false;
        }
        invariants(schema, Level::Root, "", "", &mut broken);
        completeness::check(schema, "", "", &mut broken);
        if !broken.is_empty() {
            return false;
        }
        let Some((compiled, found)) = compiled_for_defaults(schema, ("", ""), minor) else {
            return false;
        };
        found.iter().any(|entry| {
            entry.meta
                || validate::default_is_pruned(&compiled[entry.slot], entry.index, entry.default, false) != Some(false)
        })
    })
}

/// A version's `schema`, none when absent or `null`.
fn schema_of<'n, 'j>(version: &'n Node<'j>) -> Option<&'n Node<'j>> {
    version.get("schema").filter(|s| !s.is_null())
}

/// A rule an update relaxes when the old CRD breaks it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// `specHasInvalidTypes`.
    PropertyType,
    /// `hasInvalidMapListKeysMapSet`.
    MapListKeysMapSet,
    /// `hasNonAtomicSetType`.
    AtomicSetType,
}

/// Whether any schema of `crd` breaks `rule`.
fn any_schema_breaks(crd: &Node<'_>, rule: Rule) -> bool {
    let Some(Node::Array(versions)) = crd.at(&["spec", "versions"]) else {
        return false;
    };
    let only = Options {
        valid_property_type: rule == Rule::PropertyType,
        map_list_keys_map_set: rule == Rule::MapListKeysMapSet,
        atomic_set_type: rule == Rule::AtomicSetType,
        always: false,
        minor: 0,
        pruned_defaults: false,
    };
    versions.iter().any(|v| {
        let mut errors = Vec::new();
        if let Some(schema) = v.at(&["schema", "openAPIV3Schema"]) {
            walk(schema, "", "", only, &Place::default(), &mut errors);
        }
        !errors.is_empty()
    })
}

/// An error at `path` + `step` as the API server names it, located at `at` + `step`.
fn at_step(mut error: FieldError, at: &str, step: &str) -> FieldError {
    error.at = format!("{at}{step}");
    error
}

/// A string member of a schema.
fn text<'n>(schema: &'n Node<'_>, key: &str) -> Option<&'n str> {
    schema.get(key).and_then(Node::as_str)
}

/// Whether a schema's member is `true`.
fn flag(schema: &Node<'_>, key: &str) -> bool {
    schema.get(key).and_then(Node::as_bool) == Some(true)
}

/// Whether a member is present and not `null` (a Go pointer that is set).
fn set(schema: &Node<'_>, key: &str) -> bool {
    schema.get(key).is_some_and(|value| !value.is_null())
}

/// Whether a member is a non-empty object (a Go map with entries).
fn non_empty_map(schema: &Node<'_>, key: &str) -> bool {
    schema
        .get(key)
        .and_then(Node::as_object)
        .is_some_and(|entries| !entries.is_empty())
}

/// Whether a member is a non-empty list.
fn non_empty_list(schema: &Node<'_>, key: &str) -> bool {
    matches!(schema.get(key), Some(Node::Array(items)) if !items.is_empty())
}

/// A schema's `items` when it is one schema (an object).
fn items_schema<'n, 'j>(schema: &'n Node<'j>) -> Option<&'n Node<'j>> {
    schema.get("items").filter(|items| matches!(items, Node::Object(_)))
}

/// Checks `schema` (at `path` as the API server names it, at `at` in the manifest) and every
/// schema it holds, as `ValidateCustomResourceDefinitionOpenAPISchema` recurses.
fn walk(schema: &Node<'_>, path: &str, at: &str, options: Options, place: &Place, errors: &mut Vec<FieldError>) {
    let mut push = |error: FieldError, step: &str| errors.push(at_step(error, at, step));
    let kind = text(schema, "type").unwrap_or_default();
    // `specStandardValidatorV3.validate`.
    if options.valid_property_type && !kind.is_empty() && !OPENAPI_V3_TYPES.contains(&kind) {
        let valid: Vec<String> = OPENAPI_V3_TYPES.iter().map(|t| t.to_string()).collect();
        let error = FieldError::not_supported(format!("{path}.type"), BadValue::Str(kind.to_string()), &valid);
        push(error, ".type");
    }
    if options.always {
        if let Some(reason) = &place.no_defaults
            && set(schema, "default")
        {
            push(
                FieldError::forbidden(format!("{path}.default"), format!("must not be set {reason}")),
                ".default",
            );
        }
        let unsupported = [
            ("id", !text(schema, "id").unwrap_or_default().is_empty()),
            ("additionalItems", set(schema, "additionalItems")),
            ("patternProperties", non_empty_map(schema, "patternProperties")),
            ("definitions", non_empty_map(schema, "definitions")),
            ("dependencies", set(schema, "dependencies")),
            ("$ref", set(schema, "$ref")),
        ];
        for (keyword, _) in unsupported.iter().filter(|(_, found)| *found) {
            let step = format!(".{keyword}");
            push(
                FieldError::forbidden(format!("{path}{step}"), format!("{keyword} is not supported")),
                &step,
            );
        }
        if kind == "null" {
            push(
                FieldError::forbidden(
                    format!("{path}.type"),
                    "type cannot be set to null, use nullable as an alternative",
                ),
                ".type",
            );
        }
        if non_empty_list(schema, "items") {
            push(
                FieldError::forbidden(
                    format!("{path}.items"),
                    "items must be a schema object and not an array",
                ),
                ".items",
            );
        }
        if place.inside_meta && flag(schema, "x-kubernetes-embedded-resource") {
            let step = ".x-kubernetes-embedded-resource";
            push(
                FieldError::forbidden(format!("{path}{step}"), "must not be used inside of resource meta"),
                step,
            );
        }
        if flag(schema, "uniqueItems") {
            push(
                FieldError::forbidden(
                    format!("{path}.uniqueItems"),
                    "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
                ),
                ".uniqueItems",
            );
        }
        // `additionalProperties: true` beside properties means nothing; `false` or a schema
        // contradicts them.
        if non_empty_map(schema, "properties")
            && matches!(
                schema.get("additionalProperties"),
                Some(Node::Object(_) | Node::Bool(false))
            )
        {
            push(
                FieldError::forbidden(
                    format!("{path}.additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                ),
                ".additionalProperties",
            );
        }
    }
    let mut child = |node: &Node<'_>, step: &str, place: &Place| {
        if matches!(node, Node::Object(_)) {
            walk(
                node,
                &format!("{path}{step}"),
                &format!("{at}{step}"),
                options,
                place,
                errors,
            );
        }
    };
    let inner = Place {
        root: false,
        ..place.clone()
    };
    if let Some(node) = schema.get("additionalProperties") {
        let mut sub = inner.clone();
        if place.inside_meta {
            // Pruning without a value is ambiguous there.
            sub.no_defaults = Some("inside additionalProperties applying to object metadata".to_string());
        }
        child(node, ".additionalProperties", &sub);
    }
    if let Some(entries) = schema.get("properties").and_then(Node::as_object) {
        for (key, value) in entries {
            let mut sub = inner.clone();
            if (place.root || flag(schema, "x-kubernetes-embedded-resource"))
                && matches!(key.as_ref(), "metadata" | "kind" | "apiVersion")
            {
                sub.inside_meta = true;
                if place.root {
                    sub.no_defaults = Some(format!("in top-level {key}"));
                }
            }
            child(value, &format!(".properties[{key}]"), &sub);
        }
    }
    if let Some(node) = schema.get("not") {
        child(node, ".not", &inner);
    }
    for listed in ["allOf", "oneOf", "anyOf"] {
        if let Some(Node::Array(items)) = schema.get(listed) {
            for (i, item) in items.iter().enumerate() {
                child(item, &format!(".{listed}[{i}]"), &inner);
            }
        }
    }
    if let Some(entries) = schema.get("definitions").and_then(Node::as_object) {
        for (key, value) in entries {
            child(value, &format!(".definitions[{key}]"), &inner);
        }
    }
    match schema.get("items") {
        Some(Node::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                child(item, &format!(".items[{i}]"), &inner);
            }
        }
        Some(items) => child(items, ".items", &inner),
        None => {}
    }
    if let Some(entries) = schema.get("dependencies").and_then(Node::as_object) {
        for (key, value) in entries {
            child(value, &format!(".dependencies[{key}]"), &inner);
        }
    }
    extensions(schema, path, at, options, errors);
    super::crd_rules::keywords(schema, path, at, errors);
}

/// The errors of a schema's Kubernetes extensions, after those of the schemas it holds.
fn extensions(schema: &Node<'_>, path: &str, at: &str, options: Options, errors: &mut Vec<FieldError>) {
    let mut local = Vec::new();
    let mut push = |error: FieldError, step: &str| local.push(at_step(error, at, step));
    let kind = text(schema, "type").unwrap_or_default();
    let map_type = text(schema, "x-kubernetes-map-type");
    let list_type = text(schema, "x-kubernetes-list-type");
    let items = items_schema(schema);
    // A list or a map type on a schema of another type: `Required` when the type is empty.
    let other_type = |expected: &str, keyword: &str| {
        let detail = format!("must be {expected} if {keyword} is specified");
        if kind.is_empty() {
            FieldError::required(format!("{path}.type"), detail)
        } else {
            FieldError::invalid(format!("{path}.type"), BadValue::Str(kind.to_string()), detail)
        }
    };
    if options.always {
        if schema
            .get("x-kubernetes-preserve-unknown-fields")
            .and_then(Node::as_bool)
            == Some(false)
        {
            let step = ".x-kubernetes-preserve-unknown-fields";
            push(
                FieldError::invalid(
                    format!("{path}{step}"),
                    BadValue::Bool(false),
                    "must be true or undefined",
                ),
                step,
            );
        }
        if map_type.is_some() && kind != "object" {
            push(other_type("object", "x-kubernetes-map-type"), ".type");
        }
        if let Some(map_type) = map_type
            && !matches!(map_type, "atomic" | "granular")
        {
            let step = ".x-kubernetes-map-type";
            let valid = ["atomic".to_string(), "granular".to_string()];
            push(
                FieldError::not_supported(format!("{path}{step}"), BadValue::Str(map_type.to_string()), &valid),
                step,
            );
        }
    }
    if list_type.is_some() && kind != "array" {
        if options.always {
            push(other_type("array", "x-kubernetes-list-type"), ".type");
        }
    } else if options.atomic_set_type
        && list_type == Some("set")
        && let Some(items) = items
    {
        // The items of a set are compared whole: a list or a map among them must be atomic. The
        // value printed is the items' list type (the source passes it for both).
        let items_list_type = items.get("x-kubernetes-list-type").filter(|t| !t.is_null());
        let value = BadValue::Json(items_list_type.map_or_else(|| "null".to_string(), go_json));
        let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match text(items, "type") {
            Some("array") if items_list_type.is_some() && text(items, "x-kubernetes-list-type") != Some("atomic") => {
                let step = ".items.x-kubernetes-list-type";
                push(FieldError::invalid(format!("{path}{step}"), value, detail), step);
            }
            Some("object") if text(items, "x-kubernetes-map-type") != Some("atomic") => {
                let step = ".items.x-kubernetes-map-type";
                push(FieldError::invalid(format!("{path}{step}"), value, detail), step);
            }
            _ => {}
        }
    }
    if options.always {
        list_keywords(schema, path, &mut push);
    }
    errors.extend(local);
    map_list_keys_map_set(schema, path, at, options, errors);
}

/// The list keywords' own rules (an unsupported list type, map keys without a map list, a map
/// list without keys or without an object schema of scalar keys).
fn list_keywords(schema: &Node<'_>, path: &str, push: &mut impl FnMut(FieldError, &str)) {
    let list_type = text(schema, "x-kubernetes-list-type");
    let items = items_schema(schema);
    if let Some(list_type) = list_type
        && !matches!(list_type, "atomic" | "set" | "map")
    {
        let step = ".x-kubernetes-list-type";
        let valid = ["atomic".to_string(), "set".to_string(), "map".to_string()];
        push(
            FieldError::not_supported(format!("{path}{step}"), BadValue::Str(list_type.to_string()), &valid),
            step,
        );
    }
    let keys: Vec<&str> = match schema.get("x-kubernetes-list-map-keys") {
        Some(Node::Array(keys)) => keys.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    };
    let keys_value = || {
        BadValue::Json(
            schema
                .get("x-kubernetes-list-map-keys")
                .map_or_else(String::new, go_json),
        )
    };
    if !keys.is_empty() && list_type != Some("map") {
        let step = ".x-kubernetes-list-type";
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        push(
            match list_type {
                None => FieldError::required(format!("{path}{step}"), detail),
                Some(other) => FieldError::invalid(format!("{path}{step}"), BadValue::Str(other.to_string()), detail),
            },
            step,
        );
    }
    if list_type == Some("map") {
        if keys.is_empty() {
            let step = ".x-kubernetes-list-map-keys";
            push(
                FieldError::required(
                    format!("{path}{step}"),
                    "must not be empty if x-kubernetes-list-type is map",
                ),
                step,
            );
        }
        // `items: []` decodes to no items. A list of schemas is refused as well ("must only have
        // a single schema"), with a value printed from the internal type: not said here.
        if !set(schema, "items") || matches!(schema.get("items"), Some(Node::Array(list)) if list.is_empty()) {
            push(
                FieldError::required(
                    format!("{path}.items"),
                    "must have a schema if x-kubernetes-list-type is map",
                ),
                ".items",
            );
        }
        if let Some(items) = items {
            let items_type = text(items, "type").unwrap_or_default();
            if items_type != "object" {
                let step = ".items.type";
                push(
                    FieldError::invalid(
                        format!("{path}{step}"),
                        BadValue::Str(items_type.to_string()),
                        "must be object if parent array's x-kubernetes-list-type is map",
                    ),
                    step,
                );
            } else {
                let mut seen: Vec<&str> = Vec::new();
                for key in &keys {
                    match items.get("properties").and_then(|p| p.get(key)) {
                        Some(property) => {
                            if matches!(text(property, "type"), Some("array" | "object")) {
                                // The value printed is the items' type, as the source passes it.
                                let step = format!(".items.properties[{key}].type");
                                push(
                                    FieldError::invalid(
                                        format!("{path}{step}"),
                                        BadValue::Str(items_type.to_string()),
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                    ),
                                    &step,
                                );
                            }
                        }
                        None => {
                            let step = ".x-kubernetes-list-map-keys";
                            push(
                                FieldError::invalid(
                                    format!("{path}{step}"),
                                    keys_value(),
                                    "entries must all be names of item properties",
                                ),
                                step,
                            );
                        }
                    }
                    if seen.contains(key) {
                        let step = ".x-kubernetes-list-map-keys";
                        push(
                            FieldError::invalid(
                                format!("{path}{step}"),
                                keys_value(),
                                "must not contain duplicate entries",
                            ),
                            step,
                        );
                    }
                    seen.push(key);
                }
            }
        }
    }
}

/// `validateMapListKeysMapSet`: the items of a `set` or `map` list and the keys of a `map` list.
fn map_list_keys_map_set(schema: &Node<'_>, path: &str, at: &str, options: Options, errors: &mut Vec<FieldError>) {
    let mut push = |error: FieldError, step: &str| errors.push(at_step(error, at, step));
    if !options.map_list_keys_map_set {
        return;
    }
    let (Some(list_type @ ("set" | "map")), Some(items)) =
        (text(schema, "x-kubernetes-list-type"), items_schema(schema))
    else {
        return;
    };
    if flag(items, "nullable") {
        let step = ".items.nullable";
        push(
            FieldError::forbidden(
                format!("{path}{step}"),
                format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
            ),
            step,
        );
    }
    if list_type != "map" {
        return;
    }
    let required: Vec<&str> = match items.get("required") {
        Some(Node::Array(names)) => names.iter().filter_map(Node::as_str).collect(),
        _ => Vec::new(),
    };
    let Some(Node::Array(keys)) = schema.get("x-kubernetes-list-map-keys") else {
        return;
    };
    for key in keys.iter().filter_map(Node::as_str) {
        let Some(property) = items.get("properties").and_then(|p| p.get(key)) else {
            continue;
        };
        if !required.contains(&key) && !set(property, "default") {
            let step = format!(".items.properties[{key}].default");
            push(
                FieldError::required(
                    format!("{path}{step}"),
                    "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                ),
                &step,
            );
        }
        if flag(property, "nullable") {
            let step = format!(".items.properties[{key}].nullable");
            push(
                FieldError::forbidden(
                    format!("{path}{step}"),
                    "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                ),
                &step,
            );
        }
    }
}

/// The schemas `NewStructural` converts a schema's children into, each with its step: the
/// properties, one `items` schema, an `additionalProperties` schema, and the value validations'
/// `allOf`, `anyOf`, `oneOf` and `not`.
fn structural_children<'n, 'j>(schema: &'n Node<'j>) -> Vec<(String, &'n Node<'j>)> {
    let mut children = Vec::new();
    if let Some(items) = items_schema(schema) {
        children.push((".items".to_string(), items));
    }
    if let Some(entries) = schema.get("properties").and_then(Node::as_object) {
        for (key, value) in entries {
            children.push((format!(".properties[{key}]"), value));
        }
    }
    if let Some(node @ Node::Object(_)) = schema.get("additionalProperties") {
        children.push((".additionalProperties".to_string(), node));
    }
    for listed in ["anyOf", "allOf", "oneOf"] {
        if let Some(Node::Array(items)) = schema.get(listed) {
            for (i, item) in items.iter().enumerate() {
                children.push((format!(".{listed}[{i}]"), item));
            }
        }
    }
    if let Some(node @ Node::Object(_)) = schema.get("not") {
        children.push((".not".to_string(), node));
    }
    children
}

/// What `NewStructural` refuses in one schema (`validateUnsupportedFields`, a list of `items`,
/// `newExtensions`), in its order.
fn unsupported(schema: &Node<'_>) -> Option<&'static str> {
    let named = |key: &str| !text(schema, key).unwrap_or_default().is_empty();
    [
        (named("id"), "OpenAPIV3Schema 'id' is not supported"),
        (named("$schema"), "OpenAPIV3Schema 'schema' is not supported"),
        (named("$ref"), "OpenAPIV3Schema '$ref' is not supported"),
        (
            non_empty_map(schema, "patternProperties"),
            "OpenAPIV3Schema 'patternProperties' is not supported",
        ),
        (
            non_empty_map(schema, "dependencies"),
            "OpenAPIV3Schema 'dependencies' is not supported",
        ),
        (
            set(schema, "additionalItems"),
            "OpenAPIV3Schema 'additionalItems' is not supported",
        ),
        (
            non_empty_map(schema, "definitions"),
            "OpenAPIV3Schema 'definitions' is not supported",
        ),
        (
            non_empty_list(schema, "items"),
            "OpenAPIV3Schema 'items' must be a schema, but is an array",
        ),
        (
            schema
                .get("x-kubernetes-preserve-unknown-fields")
                .and_then(Node::as_bool)
                == Some(false),
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined",
        ),
    ]
    .into_iter()
    .find_map(|(found, message)| found.then_some(message))
}

/// Whether `NewStructural` converts the schema (nothing in it is [`unsupported`]).
pub(super) fn converts(schema: &Node<'_>) -> bool {
    unsupported(schema).is_none()
        && structural_children(schema)
            .into_iter()
            .all(|(_, child)| converts(child))
}

/// Every schema `NewStructural` refuses, with its message and where it is.
fn unconvertible(schema: &Node<'_>, at: &str, offences: &mut Vec<(String, String)>) {
    if let Some(message) = unsupported(schema) {
        offences.push((message.to_string(), at.to_string()));
    }
    for (step, child) in structural_children(schema) {
        unconvertible(child, &format!("{at}{step}"), offences);
    }
}

/// Whether the schema or one it holds has CEL rules.
fn has_validations(schema: &Node<'_>) -> bool {
    set(schema, "x-kubernetes-validations")
        || structural_children(schema)
            .into_iter()
            .any(|(_, child)| has_validations(child))
}

/// Where a schema is in the structural tree (`level`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    /// `rootLevel`.
    Root,
    /// `itemLevel`.
    Item,
    /// `fieldLevel`.
    Field,
}

/// Whether an `anyOf` is the int-or-string pattern (`[{type: integer}, {type: string}]`), or
/// could be: its two schemas of those types, whatever else they hold (then its errors are not
/// said, as the pattern's exact match is not re-checked here).
fn int_or_string_like(any_of: Option<&Node<'_>>) -> bool {
    matches!(any_of, Some(Node::Array(items)) if items.len() == 2
        && text(&items[0], "type") == Some("integer")
        && text(&items[1], "type") == Some("string"))
}

/// `validateStructuralInvariants`: the structural schema's rules for `schema`, at `level`.
fn invariants(schema: &Node<'_>, level: Level, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    let kind = text(schema, "type").unwrap_or_default();
    let embedded = flag(schema, "x-kubernetes-embedded-resource");
    let int_or_string = flag(schema, "x-kubernetes-int-or-string");
    let preserve = flag(schema, "x-kubernetes-preserve-unknown-fields");
    let additional = set(schema, "additionalProperties");
    let mut local = Vec::new();
    let mut push = |error: FieldError, step: &str| local.push(at_step(error, at, step));
    if kind == "array" && items_schema(schema).is_none() {
        push(
            FieldError::required(format!("{path}.items"), "must be specified"),
            ".items",
        );
    }
    if additional && level == Level::Root {
        push(
            FieldError::forbidden(format!("{path}.additionalProperties"), "must not be used at the root"),
            ".additionalProperties",
        );
    }
    // `validateExtensions`.
    if int_or_string && preserve {
        let step = ".x-kubernetes-preserve-unknown-fields";
        push(
            FieldError::invalid(
                format!("{path}{step}"),
                BadValue::Bool(true),
                "must be false if x-kubernetes-int-or-string is true",
            ),
            step,
        );
    }
    if int_or_string && embedded {
        let step = ".x-kubernetes-embedded-resource";
        push(
            FieldError::invalid(
                format!("{path}{step}"),
                BadValue::Bool(true),
                "must be false if x-kubernetes-int-or-string is true",
            ),
            step,
        );
    }
    if embedded && kind != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        push(
            if kind.is_empty() {
                FieldError::required(format!("{path}.type"), detail)
            } else {
                FieldError::invalid(format!("{path}.type"), BadValue::Str(kind.to_string()), detail)
            },
            ".type",
        );
    } else if kind.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        push(FieldError::required(format!("{path}.type"), detail), ".type");
    }
    if embedded && additional {
        push(
            FieldError::forbidden(
                format!("{path}.additionalProperties"),
                "must not be used if x-kubernetes-embedded-resource is set",
            ),
            ".additionalProperties",
        );
    }
    if level == Level::Root && !kind.is_empty() && kind != "object" {
        push(
            FieldError::invalid(
                format!("{path}.type"),
                BadValue::Str(kind.to_string()),
                "must be object at the root",
            ),
            ".type",
        );
    }
    let properties = schema.get("properties");
    let check_metadata = level == Level::Root || embedded;
    for name in ["kind", "apiVersion"] {
        if let Some(property) = properties.and_then(|p| p.get(name))
            && check_metadata
        {
            let property_type = text(property, "type").unwrap_or_default();
            if property_type != "string" {
                let step = format!(".properties[{name}].type");
                push(
                    FieldError::invalid(
                        format!("{path}{step}"),
                        BadValue::Str(property_type.to_string()),
                        "must be string",
                    ),
                    &step,
                );
            }
        }
    }
    if let Some(metadata) = properties.and_then(|p| p.get("metadata")) {
        let metadata_type = text(metadata, "type").unwrap_or_default();
        if check_metadata && metadata_type != "object" {
            let step = ".properties[metadata].type";
            push(
                FieldError::invalid(
                    format!("{path}{step}"),
                    BadValue::Str(metadata_type.to_string()),
                    "must be object",
                ),
                step,
            );
        }
        if level == Level::Root && specifies_more_than_names(metadata) {
            push(
                FieldError::forbidden(
                    format!("{path}.properties[metadata]"),
                    "must not specify anything other than name and generateName, but metadata is implicitly specified",
                ),
                ".properties[metadata]",
            );
        }
    }
    if embedded && !preserve && !non_empty_map(schema, "properties") {
        push(
            FieldError::required(
                format!("{path}.properties"),
                "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
            ),
            ".properties",
        );
    }
    errors.extend(local);
    if let Some(items) = items_schema(schema) {
        invariants(
            items,
            Level::Item,
            &format!("{path}.items"),
            &format!("{at}.items"),
            errors,
        );
    }
    if let Some(entries) = properties.and_then(Node::as_object) {
        for (key, value) in entries {
            let step = format!(".properties[{key}]");
            invariants(
                value,
                Level::Field,
                &format!("{path}{step}"),
                &format!("{at}{step}"),
                errors,
            );
        }
    }
    if let Some(node @ Node::Object(_)) = schema.get("additionalProperties") {
        let step = ".additionalProperties";
        invariants(
            node,
            Level::Field,
            &format!("{path}{step}"),
            &format!("{at}{step}"),
            errors,
        );
    }
    value_validation(schema, false, path, at, errors);
}

/// `validateValueValidation`: the `anyOf`, `allOf`, `oneOf` and `not` of a schema, each of which
/// may only restrict values (`validateNestedValueValidation`), and a `pattern` Go's `regexp`
/// refuses.
fn value_validation(schema: &Node<'_>, skip_any_of: bool, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    let any_of = schema.get("anyOf");
    if !skip_any_of
        && !int_or_string_like(any_of)
        && let Some(Node::Array(items)) = any_of
    {
        for (i, item) in items.iter().enumerate() {
            let step = format!(".anyOf[{i}]");
            nested(item, false, &format!("{path}{step}"), &format!("{at}{step}"), errors);
        }
    }
    if let Some(Node::Array(items)) = schema.get("allOf") {
        for (i, item) in items.iter().enumerate() {
            let step = format!(".allOf[{i}]");
            let skip = i == 0 && int_or_string_like(item.get("anyOf"));
            nested(item, skip, &format!("{path}{step}"), &format!("{at}{step}"), errors);
        }
    }
    if let Some(Node::Array(items)) = schema.get("oneOf") {
        for (i, item) in items.iter().enumerate() {
            let step = format!(".oneOf[{i}]");
            nested(item, false, &format!("{path}{step}"), &format!("{at}{step}"), errors);
        }
    }
    if let Some(node @ Node::Object(_)) = schema.get("not") {
        nested(node, false, &format!("{path}.not"), &format!("{at}.not"), errors);
    }
    // A `pattern` Go's `regexp` refuses: said where Go's message is certain (the reader,
    // `go_regex`, refuses it then too, from the same reading of the pattern).
    if let Some(pattern) = text(schema, "pattern").filter(|p| !p.is_empty())
        && let Some(go_error) = go_regex_error(pattern)
    {
        errors.push(at_step(
            FieldError::invalid(
                format!("{path}.pattern"),
                BadValue::Str(pattern.to_string()),
                format!("must be a valid regular expression, but isn't: {go_error}"),
            ),
            at,
            ".pattern",
        ));
    }
}

/// `validateNestedValueValidation`: a schema under `anyOf`, `allOf`, `oneOf` or `not` states no
/// type, default, title, description, nullability, extension or CEL rule, nor `metadata`.
fn nested(schema: &Node<'_>, skip_any_of: bool, path: &str, at: &str, errors: &mut Vec<FieldError>) {
    if !matches!(schema, Node::Object(_)) {
        return;
    }
    value_validation(schema, skip_any_of, path, at, errors);
    if let Some(items) = items_schema(schema) {
        nested(items, false, &format!("{path}.items"), &format!("{at}.items"), errors);
    }
    if let Some(entries) = schema.get("properties").and_then(Node::as_object) {
        for (key, value) in entries {
            let step = format!(".properties[{key}]");
            nested(value, false, &format!("{path}{step}"), &format!("{at}{step}"), errors);
        }
    }
    let mut push = |step: &str, detail: &str| {
        errors.push(at_step(
            FieldError::forbidden(format!("{path}{step}"), detail),
            at,
            step,
        ));
    };
    let empty = "must be empty to be structural";
    let undefined = "must be undefined to be structural";
    let unset = "must be false to be structural";
    if !text(schema, "type").unwrap_or_default().is_empty() {
        push(".type", empty);
    }
    if let Some(Node::Object(_) | Node::Bool(true)) = schema.get("additionalProperties") {
        push(".additionalProperties", undefined);
    }
    if set(schema, "default") {
        push(".default", undefined);
    }
    for (key, detail) in [("title", empty), ("description", empty)] {
        if !text(schema, key).unwrap_or_default().is_empty() {
            push(&format!(".{key}"), detail);
        }
    }
    for key in [
        "nullable",
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
        "x-kubernetes-int-or-string",
    ] {
        if flag(schema, key) {
            push(&format!(".{key}"), unset);
        }
    }
    if non_empty_list(schema, "x-kubernetes-list-map-keys") {
        push(".x-kubernetes-list-map-keys", empty);
    }
    for key in ["x-kubernetes-list-type", "x-kubernetes-map-type"] {
        if set(schema, key) {
            push(&format!(".{key}"), undefined);
        }
    }
    if non_empty_list(schema, "x-kubernetes-validations") {
        push(".x-kubernetes-validations", empty);
    }
    if schema.get("properties").and_then(|p| p.get("metadata")).is_some() {
        push(".properties[metadata]", "must not be specified in a nested context");
    }
}

/// Whether the root's `metadata` schema says more than its type, its default and the schemas of
/// `name` and `generateName` (`validateStructuralMetadataInvariants`). Only members whose Go value
/// is certainly set count (a non-empty string or collection, `true`, a number): an empty list or
/// object, whose decoded form (nil or empty) the comparison tells apart, is not said.
fn specifies_more_than_names(metadata: &Node<'_>) -> bool {
    let Some(entries) = metadata.as_object() else {
        return false;
    };
    entries.iter().any(|(key, value)| {
        if matches!(key.as_ref(), "type" | "default") || !SCHEMA_KEYS.contains(&key.as_ref()) {
            return false;
        }
        if key == "properties" {
            let names: Vec<&str> = value
                .as_object()
                .map(|entries| entries.iter().map(|(k, _)| k.as_ref()).collect())
                .unwrap_or_default();
            return names.iter().any(|name| !matches!(*name, "name" | "generateName"));
        }
        match value {
            Node::Str(s) => !s.is_empty(),
            Node::Bool(b) => *b,
            Node::Array(items) => !items.is_empty(),
            Node::Object(entries) => !entries.is_empty(),
            Node::Null => false,
            other => other.number().is_some(),
        }
    })
}

/// Whether two JSON values are equal as decoded values: objects whatever their keys' order (the
/// last of duplicate keys), numbers by value.
fn same(a: &Node<'_>, b: &Node<'_>) -> bool {
    match (a, b) {
        (Node::Object(x), Node::Object(y)) => {
            let keys = |entries: &[(std::borrow::Cow<'_, str>, Node<'_>)]| {
                let mut keys: Vec<String> = entries.iter().map(|(k, _)| k.to_string()).collect();
                keys.sort();
                keys.dedup();
                keys
            };
            let (kx, ky) = (keys(x), keys(y));
            kx == ky
                && kx
                    .iter()
                    .all(|k| matches!((a.get(k), b.get(k)), (Some(p), Some(q)) if same(p, q)))
        }
        (Node::Array(x), Node::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q)),
        (Node::Str(x), Node::Str(y)) => x == y,
        (Node::Bool(x), Node::Bool(y)) => x == y,
        (Node::Null, Node::Null) => true,
        _ => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.as_f64() == y.as_f64(),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::object_validation::NEWEST_MINOR;
    use crate::json;

    fn errors(crd: &str, old: Option<&str>) -> Vec<(String, String)> {
        let crd = json::read(crd, json::Everything, usize::MAX).unwrap();
        let old = old.map(|o| json::read(o, json::Everything, usize::MAX).unwrap());
        validate(&crd, old.as_ref(), NEWEST_MINOR)
            .into_iter()
            .map(|e| (e.to_string(), e.at))
            .collect()
    }

    fn version(name: &str, message_type: &str) -> String {
        format!(
            r#"{{"name":"{name}","served":true,"storage":{},"schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{{"type":"object","properties":{{"message":{{"type":"{message_type}"}}}}}}}}}}}}}}"#,
            name == "v1"
        )
    }

    fn crd(versions: &[String]) -> String {
        format!(
            r#"{{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","spec":{{"versions":[{}]}}}}"#,
            versions.join(",")
        )
    }

    const UNSUPPORTED: &str =
        r#"Unsupported value: "strign": supported values: "array", "boolean", "integer", "number", "object", "string""#;

    #[test]
    fn a_type_typo_is_refused_at_the_hoisted_path_when_versions_share_the_schema() {
        // kubectl-validate's `error_crd_typo.yaml`: one version, so its schema is hoisted.
        assert_eq!(
            errors(&crd(&[version("v1", "strign")]), None),
            [(
                format!("spec.validation.openAPIV3Schema.properties[spec].properties[message].type: {UNSUPPORTED}"),
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[message].type".to_string()
            )]
        );
        // Two versions with one schema: said once, at the hoisted path.
        assert_eq!(
            errors(&crd(&[version("v1", "strign"), version("v2", "strign")]), None).len(),
            1
        );
        // Valid types, and no type at all, are not this rule's (an array without items and a
        // field without a type are the structural schema's).
        for valid in OPENAPI_V3_TYPES.into_iter().chain([""]) {
            let found = errors(&crd(&[version("v1", valid)]), None);
            assert!(
                found.iter().all(|(text, _)| !text.contains("Unsupported")),
                "{valid}: {found:?}"
            );
        }
        assert!(errors(&crd(&[version("v1", "string")]), None).is_empty());
    }

    #[test]
    fn versions_with_different_schemas_are_named_each() {
        let found = errors(&crd(&[version("v1", "string"), version("v2", "strign")]), None);
        assert_eq!(
            found,
            [(
                format!(
                    "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[message].type: {UNSUPPORTED}"
                ),
                "spec.versions[1].schema.openAPIV3Schema.properties[spec].properties[message].type".to_string()
            )]
        );
    }

    #[test]
    fn every_nested_schema_is_checked() {
        let schema = r#"{"type":"object","properties":{"a":{"type":"array","items":{"type":"int"}},
          "b":{"type":"object","additionalProperties":{"type":"map"}},
          "c":{"allOf":[{"type":"str"}],"anyOf":[{"not":{"type":"bool"}}],"oneOf":[{"type":"integer"}]}}}"#;
        let crd = format!(r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{schema}}}}}]}}}}"#);
        let fields: Vec<String> = errors(&crd, None)
            .into_iter()
            .filter(|(text, _)| text.contains("Unsupported"))
            .map(|(text, _)| text.split(':').next().unwrap().to_string())
            .collect();
        assert_eq!(
            fields,
            [
                "spec.validation.openAPIV3Schema.properties[a].items.type",
                "spec.validation.openAPIV3Schema.properties[b].additionalProperties.type",
                "spec.validation.openAPIV3Schema.properties[c].allOf[0].type",
                "spec.validation.openAPIV3Schema.properties[c].anyOf[0].not.type",
            ]
        );
    }

    /// A CRD of one version whose schema's `spec` is `spec`.
    fn with_spec(spec: &str) -> String {
        format!(
            r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{spec}}}}}}}}}]}}}}"#
        )
    }

    const ROOT: &str = "spec.validation.openAPIV3Schema.properties[spec]";

    #[test]
    fn unique_items_and_preserve_unknown_fields_false_are_refused() {
        let found = errors(
            &with_spec(
                r#"{"type":"object","x-kubernetes-preserve-unknown-fields":false,
                "properties":{"l":{"type":"array","uniqueItems":true,"items":{"type":"string"}}}}"#,
            ),
            None,
        );
        assert_eq!(
            found,
            [
                (
                    format!(
                        "{ROOT}.properties[l].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[l].uniqueItems".to_string()
                ),
                (
                    format!(
                        "{ROOT}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-preserve-unknown-fields"
                        .to_string()
                ),
            ]
        );
        let valid = with_spec(
            r#"{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"l":{"type":"array","uniqueItems":false,"items":{"type":"string"}}}}"#,
        );
        assert!(errors(&valid, None).is_empty());
        // No update relaxes them.
        let old = with_spec(r#"{"type":"array","uniqueItems":true,"items":{"type":"string"}}"#);
        assert_eq!(errors(&old, Some(&old)).len(), 1);
    }

    #[test]
    fn map_and_list_types_are_the_supported_ones() {
        // Properties in the manifest's order (Go ranges over a map).
        let found: Vec<String> = errors(
            &with_spec(
                r#"{"type":"object","properties":{"m":{"type":"object","x-kubernetes-map-type":"merge"},
                "l":{"type":"array","x-kubernetes-list-type":"list","items":{"type":"string"}}}}"#,
            ),
            None,
        )
        .into_iter()
        .map(|(text, _)| text)
        .collect();
        assert_eq!(
            found,
            [
                format!(
                    "{ROOT}.properties[m].x-kubernetes-map-type: Unsupported value: \"merge\": supported values: \"atomic\", \"granular\""
                ),
                format!(
                    "{ROOT}.properties[l].x-kubernetes-list-type: Unsupported value: \"list\": supported values: \"atomic\", \"set\", \"map\""
                ),
            ]
        );
        for valid in [
            r#"{"type":"object","x-kubernetes-map-type":"atomic"}"#,
            r#"{"type":"object","x-kubernetes-map-type":"granular"}"#,
            r#"{"type":"array","x-kubernetes-list-type":"atomic","items":{"type":"string"}}"#,
            r#"{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}"#,
        ] {
            assert!(errors(&with_spec(valid), None).is_empty(), "{valid}");
        }
    }

    #[test]
    fn list_map_keys_must_be_required_or_defaulted_and_not_nullable() {
        let list = |items: &str| {
            with_spec(&format!(
                r#"{{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name","port"],"items":{items}}}"#
            ))
        };
        let bad = list(
            r#"{"type":"object","nullable":true,"properties":{"name":{"type":"string","nullable":true},"port":{"type":"integer"}}}"#,
        );
        let found: Vec<String> = errors(&bad, None).into_iter().map(|(text, _)| text).collect();
        assert_eq!(
            found,
            [
                format!("{ROOT}.items.nullable: Forbidden: cannot be nullable when x-kubernetes-list-type is map"),
                format!(
                    "{ROOT}.items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
                format!(
                    "{ROOT}.items.properties[name].nullable: Forbidden: this property is in x-kubernetes-list-map-keys, so it cannot be nullable"
                ),
                format!(
                    "{ROOT}.items.properties[port].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"
                ),
            ]
        );
        let good = list(
            r#"{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer","default":80}}}"#,
        );
        assert!(errors(&good, None).is_empty());
        // An update of a CRD that already had such a list keeps it (and any other).
        assert!(errors(&bad, Some(&bad)).is_empty());
        assert_eq!(errors(&bad, Some(&good)).len(), 4);
    }

    #[test]
    fn an_update_of_a_crd_that_had_an_invalid_type_is_not_tightened() {
        let old = crd(&[version("v1", "strign")]);
        assert!(errors(&crd(&[version("v1", "strign")]), Some(&old)).is_empty());
        let valid_before = crd(&[version("v1", "string")]);
        assert_eq!(errors(&crd(&[version("v1", "strign")]), Some(&valid_before)).len(), 1);
    }

    /// The texts of the errors of a CRD of one version whose root schema is `root`.
    fn root_errors(root: &str, old: Option<&str>) -> Vec<String> {
        let crd = |root: &str| {
            format!(r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{root}}}}}]}}}}"#)
        };
        errors(&crd(root), old.map(crd).as_deref())
            .into_iter()
            .map(|(text, _)| text)
            .collect()
    }

    #[test]
    fn a_set_of_maps_or_lists_must_be_of_atomic_items_unless_the_old_crd_had_one() {
        let set = |items: &str| {
            format!(
                r#"{{"type":"object","properties":{{"s":{{"type":"array","x-kubernetes-list-type":"set","items":{items}}}}}}}"#
            )
        };
        let granular = set(r#"{"type":"object","properties":{"a":{"type":"string"}}}"#);
        let of_sets = set(r#"{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"}}"#);
        assert_eq!(
            root_errors(&granular, None),
            [
                "spec.validation.openAPIV3Schema.properties[s].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set"
            ]
        );
        assert_eq!(
            root_errors(&of_sets, None),
            [
                r#"spec.validation.openAPIV3Schema.properties[s].items.x-kubernetes-list-type: Invalid value: "set": must be atomic as item of a list with x-kubernetes-list-type=set"#
            ]
        );
        for atomic in [
            set(r#"{"type":"object","x-kubernetes-map-type":"atomic","properties":{"a":{"type":"string"}}}"#),
            set(r#"{"type":"array","items":{"type":"string"}}"#),
            set(r#"{"type":"string"}"#),
        ] {
            assert!(root_errors(&atomic, None).is_empty(), "{atomic}");
        }
        // `requireAtomicSetType` is off when the old CRD had such a set, on otherwise.
        assert!(root_errors(&granular, Some(&of_sets)).is_empty());
        assert_eq!(root_errors(&granular, Some(&set(r#"{"type":"string"}"#))).len(), 1);
    }

    #[test]
    fn list_and_map_types_need_their_schema_type() {
        let found = root_errors(
            r#"{"type":"object","properties":{"m":{"type":"array","items":{"type":"string"},"x-kubernetes-map-type":"atomic"},
               "l":{"x-kubernetes-preserve-unknown-fields":true,"x-kubernetes-list-type":"atomic"},
               "k":{"type":"array","items":{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}},"x-kubernetes-list-map-keys":["a"]}}}"#,
            None,
        );
        assert_eq!(
            found,
            [
                r#"spec.validation.openAPIV3Schema.properties[m].type: Invalid value: "array": must be object if x-kubernetes-map-type is specified"#,
                "spec.validation.openAPIV3Schema.properties[l].type: Required value: must be array if x-kubernetes-list-type is specified",
                "spec.validation.openAPIV3Schema.properties[k].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty",
            ]
        );
    }

    #[test]
    fn a_map_list_needs_keys_and_items_of_object_type_with_those_scalar_properties() {
        let list = |rest: &str| {
            format!(
                r#"{{"type":"object","properties":{{"p":{{"type":"array","x-kubernetes-list-type":"map"{rest}}}}}}}"#
            )
        };
        const P: &str = "spec.validation.openAPIV3Schema.properties[p]";
        assert_eq!(
            root_errors(
                &list(r#","items":{"type":"object","properties":{"a":{"type":"string"}}}"#),
                None
            ),
            [format!(
                "{P}.x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            )]
        );
        // No items at all: the structural schema's error comes first.
        assert_eq!(
            root_errors(&list(r#","x-kubernetes-list-map-keys":["a"]"#), None),
            [
                format!("{P}.items: Required value: must be specified"),
                format!("{P}.items: Required value: must have a schema if x-kubernetes-list-type is map"),
            ]
        );
        assert_eq!(
            root_errors(
                &list(r#","x-kubernetes-list-map-keys":["a"],"items":{"type":"integer"}"#),
                None
            ),
            [format!(
                r#"{P}.items.type: Invalid value: "integer": must be object if parent array's x-kubernetes-list-type is map"#
            )]
        );
        let keys = list(
            r#","x-kubernetes-list-map-keys":["a","b","a","o"],"items":{"type":"object","required":["a","o"],"properties":{"a":{"type":"string"},"o":{"type":"array","items":{"type":"string"}}}}"#,
        );
        assert_eq!(
            root_errors(&keys, None),
            [
                format!(
                    r#"{P}.x-kubernetes-list-map-keys: Invalid value: ["a","b","a","o"]: entries must all be names of item properties"#
                ),
                format!(
                    r#"{P}.x-kubernetes-list-map-keys: Invalid value: ["a","b","a","o"]: must not contain duplicate entries"#
                ),
                format!(
                    r#"{P}.items.properties[o].type: Invalid value: "object": must be a scalar type if parent array's x-kubernetes-list-type is map"#
                ),
            ]
        );
        // None of these is relaxed on an update.
        assert_eq!(root_errors(&keys, Some(&keys)).len(), 3);
        let good = list(
            r#","x-kubernetes-list-map-keys":["a","n"],"items":{"type":"object","required":["a","n"],"properties":{"a":{"type":"string"},"n":{"type":"integer"}}}"#,
        );
        assert!(root_errors(&good, None).is_empty());
    }

    #[test]
    fn unsupported_keywords_and_a_nullable_root_are_refused() {
        let found = root_errors(
            r##"{"type":"object","nullable":true,"properties":{"a":{"type":"string","id":"x","$ref":"#/d"},"b":{"type":"array","items":[{"type":"string"}]},
               "c":{"type":"null"},"d":{"type":"object","dependencies":{"e":["f"]},"definitions":{"g":{"type":"string"}},
               "patternProperties":{"^h":{"type":"string"}},"additionalItems":true}}}"##,
            None,
        );
        assert_eq!(
            found,
            [
                "spec.validation.openAPIV3Schema.nullable: Forbidden: nullable cannot be true at the root",
                "spec.validation.openAPIV3Schema.properties[a].id: Forbidden: id is not supported",
                "spec.validation.openAPIV3Schema.properties[a].$ref: Forbidden: $ref is not supported",
                "spec.validation.openAPIV3Schema.properties[b].items: Forbidden: items must be a schema object and not an array",
                r#"spec.validation.openAPIV3Schema.properties[c].type: Unsupported value: "null": supported values: "array", "boolean", "integer", "number", "object", "string""#,
                "spec.validation.openAPIV3Schema.properties[c].type: Forbidden: type cannot be set to null, use nullable as an alternative",
                "spec.validation.openAPIV3Schema.properties[d].additionalItems: Forbidden: additionalItems is not supported",
                "spec.validation.openAPIV3Schema.properties[d].patternProperties: Forbidden: patternProperties is not supported",
                "spec.validation.openAPIV3Schema.properties[d].definitions: Forbidden: definitions is not supported",
                "spec.validation.openAPIV3Schema.properties[d].dependencies: Forbidden: dependencies is not supported",
            ]
        );
        // Empty maps are no keywords; `nullable: false` at the root is fine.
        assert!(
            root_errors(
                r#"{"type":"object","nullable":false,"definitions":{},"patternProperties":{}}"#,
                None
            )
            .is_empty()
        );
    }

    #[test]
    fn defaults_are_forbidden_in_top_level_metadata_and_additional_properties_beside_properties() {
        let found = root_errors(
            r#"{"type":"object","properties":{"metadata":{"type":"object","default":{}},"kind":{"type":"string","default":"W"},
               "spec":{"type":"object","properties":{"a":{"type":"string","default":"x"}},"additionalProperties":false},
               "m":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}}}"#,
            None,
        );
        assert_eq!(
            found,
            [
                "spec.validation.openAPIV3Schema.properties[metadata].default: Forbidden: must not be set in top-level metadata",
                "spec.validation.openAPIV3Schema.properties[kind].default: Forbidden: must not be set in top-level kind",
                "spec.validation.openAPIV3Schema.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive",
            ]
        );
    }

    /// The errors of a schema whose `spec` has `properties`, each with where it is located.
    fn spec_errors(properties: &str, old: Option<&str>) -> Vec<(String, String)> {
        let crd = |properties: &str| {
            format!(
                r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{{"type":"object","properties":{{"spec":{{"type":"object","properties":{properties}}}}}}}}}}}]}}}}"#
            )
        };
        errors(&crd(properties), old.map(crd).as_deref())
    }

    const SPEC: &str = "spec.validation.openAPIV3Schema.properties[spec]";

    #[test]
    fn a_default_its_schema_refuses_is_refused_with_kube_openapis_name_inside_the_default() {
        // The messages kubectl-validate 1.35 gives (crd.rs's module doc).
        let found = spec_errors(r#"{"replicas":{"type":"integer","maximum":3,"default":5}}"#, None);
        assert_eq!(
            found,
            [(
                format!(
                    "{SPEC}.properties[replicas].default: Invalid value: 5:  in body should be less than or equal to 3"
                ),
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[replicas].default".to_string()
            )]
        );
        let found = spec_errors(
            r#"{"tls":{"type":"object","required":["port"],"properties":{"port":{"type":"integer","maximum":10}},"default":{"port":20}}}"#,
            None,
        );
        assert_eq!(
            found,
            [(
                format!(
                    "{SPEC}.properties[tls].default.port: Invalid value: 20: port in body should be less than or equal to 10"
                ),
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[tls].default.port".to_string()
            )]
        );
        let found = spec_errors(r#"{"mode":{"type":"string","enum":["a","b"],"default":"c"}}"#, None);
        assert_eq!(
            found[0].0,
            format!(r#"{SPEC}.properties[mode].default: Unsupported value: "c": supported values: "a", "b""#)
        );
        // A required field left out of the default: the default is not defaulted itself.
        let found = spec_errors(
            r#"{"tls":{"type":"object","required":["port"],"properties":{"port":{"type":"integer","default":1}},"default":{}}}"#,
            None,
        );
        assert_eq!(
            found.iter().map(|(text, _)| text.as_str()).collect::<Vec<_>>(),
            [format!("{SPEC}.properties[tls].default.port: Required value")]
        );
        // An item inside a list's default: kube-openapi names it `[1]`, and `fldPath.Child("[1]")`
        // prints `default.[1]`; located at the item.
        let found = spec_errors(
            r#"{"list":{"type":"array","items":{"type":"string"},"default":["a",1]}}"#,
            None,
        );
        assert_eq!(
            found,
            [(
                format!(
                    r#"{SPEC}.properties[list].default.[1]: Invalid value: "integer": [1] in body must be of type string: "integer""#
                ),
                "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].default[1]".to_string()
            )]
        );
        // Items' defaults, at `items.default`; a wrong type.
        let found = spec_errors(
            r#"{"list":{"type":"array","items":{"type":"string","default":1}}}"#,
            None,
        );
        assert_eq!(
            found[0].0,
            format!(
                r#"{SPEC}.properties[list].items.default: Invalid value: "integer":  in body must be of type string: "integer""#
            )
        );
    }

    #[test]
    fn a_pruned_default_is_refused_unless_the_old_crd_had_one() {
        let pruned =
            r#"{"tls":{"type":"object","properties":{"port":{"type":"integer"}},"default":{"port":2,"extra":1}}}"#;
        assert_eq!(
            spec_errors(pruned, None)
                .into_iter()
                .map(|(text, _)| text)
                .collect::<Vec<_>>(),
            [format!(
                r#"{SPEC}.properties[tls].default: Invalid value: {{"extra":1,"port":2}}: must not have unknown fields"#
            )]
        );
        // `requirePrunedDefaults` is off when the old CRD had an unpruned default.
        assert!(spec_errors(pruned, Some(pruned)).is_empty());
        let valid = r#"{"tls":{"type":"object","properties":{"port":{"type":"integer"}},"default":{"port":2}}}"#;
        assert_eq!(spec_errors(pruned, Some(valid)).len(), 1);
        // Kept where the schema keeps unknown fields.
        let kept = r#"{"tls":{"type":"object","x-kubernetes-preserve-unknown-fields":true,"properties":{"port":{"type":"integer"}},"default":{"port":2,"extra":1}}}"#;
        assert!(spec_errors(kept, None).is_empty());
    }

    #[test]
    fn valid_defaults_and_those_not_judged_with_certainty_say_nothing() {
        for properties in [
            // Valid defaults of every kind.
            r#"{"replicas":{"type":"integer","maximum":3,"default":3}}"#,
            r#"{"mode":{"type":"string","enum":["a","b"],"default":"b"}}"#,
            r#"{"tls":{"type":"object","required":["port"],"properties":{"port":{"type":"integer","maximum":10}},"default":{"port":10}}}"#,
            r#"{"d":{"type":"string","format":"duration","default":"1h"}}"#,
            r#"{"q":{"x-kubernetes-int-or-string":true,"default":"50%"}}"#,
            // A list-type set's duplicates are not kube-openapi's to judge.
            r#"{"s":{"type":"array","x-kubernetes-list-type":"set","items":{"type":"string"},"default":["a","a"]}}"#,
            // An embedded resource's default with metadata: decoded and validated first.
            r#"{"r":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true,"default":{"apiVersion":"v1","kind":"A","metadata":{"name":"-"}}}}"#,
            // A transition rule runs with the default as `oldSelf`.
            r#"{"n":{"type":"integer","default":1,"x-kubernetes-validations":[{"rule":"self > oldSelf"}]}}"#,
            // An int-or-string has no type in the schema a default is validated against.
            r#"{"q":{"x-kubernetes-int-or-string":true,"default":true}}"#,
            r#"{"q":{"x-kubernetes-int-or-string":true,"default":1.5}}"#,
            // A format the API server strips for objects is kept for defaults: kube-openapi's
            // type check then reads it (not followed here).
            r#"{"o":{"type":"object","format":"foo","default":"x"}}"#,
            r#"{"b":{"type":"boolean","format":"foo","default":"yes"}}"#,
            r#"{"f":{"type":"string","format":"foo","default":5}}"#,
            // A list that keeps unknown fields keeps its items' (`skipPrune`).
            r#"{"l":{"type":"array","x-kubernetes-preserve-unknown-fields":true,"items":{"type":"object","properties":{"a":{"type":"string"}}},"default":[{"a":"x","b":1}]}}"#,
        ] {
            assert!(spec_errors(properties, None).is_empty(), "{properties}");
        }
    }

    #[test]
    fn only_the_defaults_sub_schemas_are_compiled_and_none_is_a_resources_root() {
        // `tls` has a default; `big`, beside it, none: only `tls` and its `port` are compiled.
        let schema = json::read(
            r#"{"type":"object","properties":{"spec":{"type":"object","properties":{
              "big":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"array","items":{"type":"string"}}}},
              "tls":{"type":"object","properties":{"port":{"type":"integer"}},"default":{"port":20},
                "x-kubernetes-validations":[{"rule":"self.port > 100","message":"port too low"}]}}}}}"#,
            json::Everything,
            64,
        )
        .unwrap();
        let (compiled, found) = compiled_for_defaults(&schema, ("", ""), NEWEST_MINOR).unwrap();
        assert_eq!(compiled.iter().map(Schema::len).collect::<Vec<_>>(), [2]);
        assert_eq!(found.len(), 1);
        assert!(!compiled[0].is_resource_root(compiled[0].root));
        // Its rule compiles against the field, not a resource (`self.metadata` is no field of it).
        assert!(compiled[0].rules_at(compiled[0].root).unwrap().is_ok());
        // The root's default compiles the whole schema, the resource's.
        let rooted = json::read(
            r#"{"type":"object","default":{},"properties":{"spec":{"type":"object"}}}"#,
            json::Everything,
            8,
        )
        .unwrap();
        let (compiled, _) = compiled_for_defaults(&rooted, ("", ""), NEWEST_MINOR).unwrap();
        assert!(compiled.len() == 1 && compiled[0].len() == 2 && compiled[0].is_resource_root(compiled[0].root));
    }

    #[test]
    fn a_defaults_cel_rules_run_only_when_its_schema_finds_nothing() {
        let rule = r#""x-kubernetes-validations":[{"rule":"self.port > 100","message":"port too low"}]"#;
        let found = spec_errors(
            &format!(
                r#"{{"tls":{{"type":"object","properties":{{"port":{{"type":"integer"}}}},"default":{{"port":20}},{rule}}}}}"#
            ),
            None,
        );
        assert_eq!(
            found.iter().map(|(text, _)| text.as_str()).collect::<Vec<_>>(),
            // An object's value is omitted (`field.OmitValueType`).
            [format!("{SPEC}.properties[tls].default: Invalid value: port too low")]
        );
        let found = spec_errors(
            &format!(
                r#"{{"tls":{{"type":"object","properties":{{"port":{{"type":"integer","maximum":10}}}},"default":{{"port":20}},{rule}}}}}"#
            ),
            None,
        );
        assert_eq!(
            found.iter().map(|(text, _)| text.as_str()).collect::<Vec<_>>(),
            [format!(
                "{SPEC}.properties[tls].default.port: Invalid value: 20: port in body should be less than or equal to 10"
            )]
        );
    }

    #[test]
    fn a_pattern_go_refuses_is_refused_with_gos_parser_error() {
        let found = spec_errors(
            r#"{"name":{"type":"string","pattern":"^(?!x)","default":"y"},"list":{"type":"array","items":{"type":"string","allOf":[{"pattern":"[a-"}]}}}"#,
            None,
        );
        assert_eq!(
            found,
            [
                (
                    format!(
                        r#"{SPEC}.properties[list].items.allOf[0].pattern: Invalid value: "[a-": must be a valid regular expression, but isn't: error parsing regexp: missing closing ]: `[a-`"#
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[list].items.allOf[0].pattern"
                        .to_string()
                ),
                (
                    format!(
                        r#"{SPEC}.properties[name].pattern: Invalid value: "^(?!x)": must be a valid regular expression, but isn't: error parsing regexp: invalid or unsupported Perl syntax: `(?!`"#
                    ),
                    "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[name].pattern".to_string()
                ),
            ]
        );
        // Patterns Go compiles, our reader's or not (a Unicode class), and one whose error is not
        // certain (a Unicode class name), say nothing.
        for pattern in [
            r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
            r"^\\p{Greek}+$",
            r"\\p{Foo}",
            r"(?P<n>a)\\d{1,3}",
        ] {
            let properties = format!(r#"{{"name":{{"type":"string","pattern":"{pattern}"}}}}"#);
            assert!(spec_errors(&properties, None).is_empty(), "{pattern}");
        }
    }

    #[test]
    fn structural_schema_errors_come_first_sorted_and_only_when_the_schema_converts() {
        let schema = r#"{"type":"object","properties":{"z":{"description":"x"},"a":{"type":"array"},
           "o":{"type":"string","oneOf":[{"type":"string","x-kubernetes-list-type":"set"}],"not":{"title":"t","properties":{"metadata":{}}}}}}"#;
        assert_eq!(
            root_errors(schema, None),
            [
                "spec.validation.openAPIV3Schema.properties[a].items: Required value: must be specified",
                "spec.validation.openAPIV3Schema.properties[o].not.properties[metadata]: Forbidden: must not be specified in a nested context",
                "spec.validation.openAPIV3Schema.properties[o].not.title: Forbidden: must be empty to be structural",
                "spec.validation.openAPIV3Schema.properties[o].oneOf[0].type: Forbidden: must be empty to be structural",
                "spec.validation.openAPIV3Schema.properties[o].oneOf[0].x-kubernetes-list-type: Forbidden: must be undefined to be structural",
                "spec.validation.openAPIV3Schema.properties[z].type: Required value: must not be empty for specified object fields",
                "spec.validation.openAPIV3Schema.properties[o].oneOf[0].type: Invalid value: \"string\": must be array if x-kubernetes-list-type is specified",
            ]
        );
        // A schema `NewStructural` refuses (here `definitions`) is not judged as a structural one.
        let unconvertible =
            r#"{"type":"object","definitions":{"d":{"type":"string"}},"properties":{"z":{"description":"x"}}}"#;
        assert_eq!(
            root_errors(unconvertible, None),
            ["spec.validation.openAPIV3Schema.definitions: Forbidden: definitions is not supported"]
        );
        // Nor a CRD that keeps unknown fields (`preserveUnknownFields: true`).
        let crd = r#"{"spec":{"preserveUnknownFields":true,"versions":[{"name":"v1","schema":{"openAPIV3Schema":{"type":"object","properties":{"z":{}}}}}]}}"#;
        assert!(errors(crd, None).is_empty());
    }

    #[test]
    fn the_root_is_an_object_whose_metadata_says_no_more_than_names() {
        let found = root_errors(
            r#"{"type":"array","items":{"type":"string"},"additionalProperties":true,"properties":{"apiVersion":{"type":"integer"},
               "metadata":{"type":"object","properties":{"name":{"type":"string"},"labels":{"type":"object"}}}}}"#,
            None,
        );
        assert_eq!(
            found,
            [
                "spec.validation.openAPIV3Schema.additionalProperties: Forbidden: must not be used at the root",
                r#"spec.validation.openAPIV3Schema.properties[apiVersion].type: Invalid value: "integer": must be string"#,
                "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified",
                r#"spec.validation.openAPIV3Schema.type: Invalid value: "array": must be object at the root"#,
            ]
        );
        for fine in [
            r#"{"type":"object","properties":{"metadata":{"type":"object","default":{},"properties":{"name":{"type":"string","maxLength":9},"generateName":{"type":"string"}}}}}"#,
            r#"{"type":"object","properties":{"metadata":{"type":"object","properties":{}, "x-unknown":"dropped"}}}"#,
            r#"{"type":"object","properties":{"metadata":{"type":"object","description":""}}}"#,
        ] {
            let found = root_errors(fine, None);
            assert!(found.iter().all(|e| !e.contains("implicitly")), "{fine}: {found:?}");
        }
    }

    #[test]
    fn a_schema_keyword_is_said_alone_when_nothing_else_is() {
        let with = |extra: &str| {
            format!(
                r#"{{"type":"object","properties":{{"a":{{"type":"string","$schema":"http://json-schema.org/schema#"}}{extra}}}}}"#
            )
        };
        assert_eq!(
            errors(
                &format!(
                    r#"{{"spec":{{"versions":[{{"name":"v1","schema":{{"openAPIV3Schema":{}}}}}]}}}}"#,
                    with("")
                ),
                None
            ),
            [(
                r#"spec.validation.openAPIV3Schema: Invalid value: "": OpenAPIV3Schema 'schema' is not supported"#
                    .to_string(),
                "spec.versions[0].schema.openAPIV3Schema.properties[a]".to_string()
            )]
        );
        // Beside another error, or twice (Go's map order picks one), it is not said.
        assert_eq!(
            root_errors(&with(r#","b":{"type":"strign"}"#), None),
            [
                r#"spec.validation.openAPIV3Schema.properties[b].type: Unsupported value: "strign": supported values: "array", "boolean", "integer", "number", "object", "string""#
            ]
        );
        assert!(root_errors(&with(r#","b":{"type":"string","$schema":"x"}"#), None).is_empty());
    }

    #[test]
    fn the_schema_keys_are_the_generated_tables_json_schema_props() {
        let table = crate::generated::api_type("apiextensions/v1", "JSONSchemaProps").unwrap();
        let mut generated: Vec<&str> = table.fields().map(|f| f.name).collect();
        generated.sort_unstable();
        let mut listed = SCHEMA_KEYS.to_vec();
        listed.sort_unstable();
        assert_eq!(listed, generated);
    }
}
