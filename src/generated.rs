//! Kubernetes tables generated at build time: the built-in resources from k8s-openapi (see
//! `build/k8s_tables.rs`), and the API's Go types, from sync-drift's tables of how the API server
//! writes each field of the built-in kinds back (`src/checks/sync_drift/api_fields.tsv`, derived
//! from the Go sources of the API: [`api_type_of`]), which crd-schema-fields reads too.

/// A built-in Kubernetes resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltinResource {
    /// API group, empty for the core group.
    pub group: &'static str,
    /// API version.
    pub version: &'static str,
    /// Kind.
    pub kind: &'static str,
    /// Plural resource name (URL path segment); empty for discovery documents such as
    /// `APIGroup`, which are kinds but not resources.
    pub plural: &'static str,
    /// True for kinds served only as a subresource of another resource (`Scale`, `Status`,
    /// `TokenRequest`, policy's `Eviction`): they have no endpoint of their own to list or name.
    pub subresource: bool,
}

include!(concat!(env!("OUT_DIR"), "/k8s_tables.rs"));

/// Every built-in resource, sorted by kind, group and version.
pub fn builtin_resources() -> impl Iterator<Item = BuiltinResource> {
    BUILTIN_PACKED
        .iter()
        .map(|&[group, version, kind, plural, lengths_a, lengths_b]| {
            let name = |start: u16, length: u16| {
                let start = usize::from(start & 0x7FFF);
                BUILTIN_NAMES.get(start..start + usize::from(length)).unwrap_or("")
            };
            BuiltinResource {
                group: name(group, lengths_a >> 8),
                version: name(version, lengths_a & 0xFF),
                kind: name(kind, lengths_b >> 8),
                plural: name(plural, lengths_b & 0xFF),
                subresource: plural & 0x8000 != 0,
            }
        })
}

/// Built-in resources whose kind is `kind`.
pub fn builtin_kinds(kind: &str) -> impl Iterator<Item = BuiltinResource> + '_ {
    builtin_resources().filter(move |r| r.kind == kind)
}

include!(concat!(env!("OUT_DIR"), "/api_fields.rs"));

mod name_hash;

/// A struct of the Kubernetes API (a kind's type or one of the types of its members).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ApiType(u16);

/// How a member holds its [`Leaf`] in Go, which decides what `omitempty` drops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The leaf itself; a struct (an object, and the leaves with their own MarshalJSON) is never empty.
    Value,
    /// A pointer to the leaf: empty only when null; `0`, `""`, `false` and `{}` are kept.
    Pointer,
    /// A list of leaves.
    List,
    /// A map from strings to leaves.
    Map,
    /// A map from strings to lists of leaves (the `extra` of user infos); no member is a list of lists.
    MapOfLists,
}

/// What a member holds, inside its [`Form`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leaf {
    /// An object of the API type.
    Object(ApiType),
    /// A string.
    String,
    /// A boolean.
    Bool,
    /// An integer.
    Int,
    /// A floating-point number (only in JSONSchemaProps).
    Float,
    /// Bytes, written as a base64 string.
    Bytes,
    /// A resource.Quantity: written back canonical (`1000m` as `"1"`), zero (or null) as `"0"`.
    Quantity,
    /// A metav1.Time (RFC 3339, seconds): zero (or null) written as null.
    Time,
    /// A metav1.MicroTime (RFC 3339, microseconds): zero (or null) written as null.
    MicroTime,
    /// A metav1.Duration (`"1h0m0s"`): zero written as `"0s"`.
    Duration,
    /// An intstr.IntOrString: zero (or null) written as `0`.
    IntOrString,
    /// Any JSON, written back verbatim (runtime.RawExtension, apiextensions' JSON); none as null.
    Free,
    /// A metav1.FieldsV1 (managedFields' field set), written back verbatim; none as null.
    FieldsV1,
    /// apiextensions' JSONSchemaPropsOrBool: an object of the type, or a boolean (zero: `false`).
    SchemaOrBool(ApiType),
    /// apiextensions' JSONSchemaPropsOrArray: an object of the type or a list of them (`[]` comes back null).
    SchemaOrArray(ApiType),
    /// apiextensions' JSONSchemaPropsOrStringArray: an object of the type or a list of strings (`[]` comes back null).
    SchemaOrStrings(ApiType),
    /// A kind's own top-level `status`, whose types are not listed.
    Status,
}

/// One JSON member of an API type, as the API server writes it back (Go's encoding/json).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiField {
    /// JSON name.
    pub name: &'static str,
    /// The json tag has `omitempty`: an empty value is dropped (by form and leaf: [`ApiField::omitted_when_zero`]).
    pub omitempty: bool,
    /// The json tag has `omitzero`: a zero value is dropped (only ObjectMeta's `creationTimestamp`).
    pub omitzero: bool,
    /// How the member holds its leaf.
    pub form: Form,
    /// What it holds.
    pub leaf: Leaf,
    /// A null (or absent) member is written back as null rather than dropped or made a zero value.
    pub keeps_null: bool,
}

impl ApiField {
    /// Whether the member is dropped when its Go value is zero (null, absent; `[]`, `{}`, `""`, `0`,
    /// `false` for the `omitempty` lists, maps, strings, numbers, booleans and byte strings).
    pub fn omitted_when_zero(self) -> bool {
        self.omitzero
            || self.omitempty
                && (self.form != Form::Value
                    || matches!(
                        self.leaf,
                        Leaf::String | Leaf::Bool | Leaf::Int | Leaf::Float | Leaf::Bytes
                    ))
    }
}

impl Leaf {
    /// The API type of an object (or JSONSchemaProps for the schema unions), if the leaf has one.
    pub fn api_type(self) -> Option<ApiType> {
        match self {
            Leaf::Object(t) | Leaf::SchemaOrBool(t) | Leaf::SchemaOrArray(t) | Leaf::SchemaOrStrings(t) => Some(t),
            _ => None,
        }
    }
}

/// The name at `offset` of length `length` in [`API_NAMES`].
fn api_name(offset: u16, length: u16) -> &'static str {
    let start = usize::from(offset);
    API_NAMES.get(start..start + usize::from(length)).unwrap_or("")
}

impl ApiType {
    /// Its Go struct name, e.g. `Container` (a kind's type is named as the kind).
    pub fn name(self) -> &'static str {
        let [offset, lengths, _] = API_TYPES[usize::from(self.0)];
        api_name(offset, lengths & 0xFF)
    }

    /// Its package, e.g. `core/v1`, `meta/v1`, `apiextensions/v1`.
    pub fn package(self) -> &'static str {
        let [_, lengths, _] = API_TYPES[usize::from(self.0)];
        let [offset, length] = API_PACKAGES[usize::from(lengths >> 8)];
        api_name(offset, length)
    }

    /// The range of the type's fields in [`API_FIELDS`] (and [`API_FIELD_HASHES`]).
    fn span(self) -> std::ops::Range<usize> {
        let i = usize::from(self.0);
        usize::from(API_TYPES[i][2])..usize::from(API_TYPES[i + 1][2])
    }

    /// The packed fields of the type, sorted by name.
    fn packed(self) -> &'static [[u16; 3]] {
        API_FIELDS.get(self.span()).unwrap_or(&[])
    }

    /// The member named `name`, if the type has it.
    ///
    /// Every key of every object a check walks is looked up here, so it is a scan of the type's
    /// 16-bit name hashes (at most 44 of them, JSONSchemaProps') with the name compared only on a
    /// matching hash: a binary search over the names cost a fifth of sync-drift's walk, slicing
    /// and comparing a name at every probe.
    pub fn field(self, name: &str) -> Option<ApiField> {
        let span = self.span();
        let hashes = API_FIELD_HASHES.get(span.clone()).unwrap_or(&[]);
        let fields = API_FIELDS.get(span).unwrap_or(&[]);
        let hash = name_hash::name_hash(name.as_bytes());
        hashes
            .iter()
            .zip(fields)
            .filter(|&(&h, _)| h == hash)
            .map(|(_, &f)| f)
            .find(|f| api_name(f[0], f[1] & 0x3F) == name)
            .map(unpack_field)
    }

    /// Every member of the type, sorted by name (none for an empty struct).
    pub fn fields(self) -> impl ExactSizeIterator<Item = ApiField> + Clone {
        self.packed().iter().map(|&f| unpack_field(f))
    }

    /// The type of a kind's own `status` (the one behind [`Leaf::Status`]), where the table lists
    /// it: CustomResourceDefinition's, for crd-schema-fields (`STATUS_LISTED` in
    /// tools/derive-api-fields.py), and those reached otherwise (PersistentVolumeClaim's). Go
    /// names it after the kind: `<Kind>Status`.
    pub fn status_type(self) -> Option<ApiType> {
        api_type(self.package(), &format!("{}Status", self.name()))
    }
}

impl std::fmt::Debug for ApiType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.package(), self.name())
    }
}

/// A field of [`API_FIELDS`], unpacked.
fn unpack_field([name, bits, target]: [u16; 3]) -> ApiField {
    let api_type = ApiType(target & 0x7FFF);
    let leaf = match (bits >> 6) & 0x1F {
        0 => Leaf::Object(api_type),
        1 => Leaf::String,
        2 => Leaf::Bool,
        3 => Leaf::Int,
        4 => Leaf::Float,
        5 => Leaf::Bytes,
        6 => Leaf::Quantity,
        7 => Leaf::Time,
        8 => Leaf::MicroTime,
        9 => Leaf::Duration,
        10 => Leaf::IntOrString,
        11 => Leaf::Free,
        12 => Leaf::FieldsV1,
        13 => Leaf::SchemaOrBool(api_type),
        14 => Leaf::SchemaOrArray(api_type),
        15 => Leaf::SchemaOrStrings(api_type),
        _ => Leaf::Status,
    };
    let form = match (bits >> 11) & 0x7 {
        0 => Form::Value,
        1 => Form::Pointer,
        2 => Form::List,
        3 => Form::Map,
        _ => Form::MapOfLists,
    };
    ApiField {
        name: api_name(name, bits & 0x3F),
        omitempty: bits & 1 << 14 != 0,
        omitzero: bits & 1 << 15 != 0,
        form,
        leaf,
        keeps_null: target & 1 << 15 != 0,
    }
}

/// The entry of [`API_KINDS`] of a kind.
fn api_kind(group: &str, version: &str, kind: &str) -> Option<[u16; 4]> {
    let i = API_KINDS
        .binary_search_by(|&[group_offset, lengths, version_offset, root]| {
            (
                api_name(group_offset, lengths >> 8),
                api_name(version_offset, lengths & 0xFF),
                ApiType(root & 0x7FFF).name(),
            )
                .cmp(&(group, version, kind))
        })
        .ok()?;
    Some(API_KINDS[i])
}

/// The API type of a kind (the core group is `""`), for the kinds a user applies: served, with an
/// ObjectMeta, not a `*List`.
pub fn api_type_of(group: &str, version: &str, kind: &str) -> Option<ApiType> {
    api_kind(group, version, kind).map(|entry| ApiType(entry[3] & 0x7FFF))
}

/// Whether a kind of [`api_type_of`] is cluster-scoped (its type is tagged
/// `+genclient:nonNamespaced`): the API server clears the `metadata.namespace` of its objects.
pub fn api_cluster_scoped(group: &str, version: &str, kind: &str) -> Option<bool> {
    api_kind(group, version, kind).map(|entry| entry[3] & 0x8000 != 0)
}

/// Every kind of [`api_type_of`], as its group, version and type (named as the kind), sorted.
pub fn api_kinds() -> impl Iterator<Item = (&'static str, &'static str, ApiType)> {
    API_KINDS.iter().map(|&[group_offset, lengths, version_offset, root]| {
        (
            api_name(group_offset, lengths >> 8),
            api_name(version_offset, lengths & 0xFF),
            ApiType(root & 0x7FFF),
        )
    })
}

/// The API type named `name` in `package` (e.g. `core/v1`, `Container`).
pub fn api_type(package: &str, name: &str) -> Option<ApiType> {
    let types = API_TYPES.get(..API_TYPES.len() - 1).unwrap_or(&[]);
    let i = types
        .binary_search_by(|&[offset, lengths, _]| {
            let [package_offset, package_length] = API_PACKAGES[usize::from(lengths >> 8)];
            (
                api_name(package_offset, package_length),
                api_name(offset, lengths & 0xFF),
            )
                .cmp(&(package, name))
        })
        .ok()?;
    u16::try_from(i).ok().map(ApiType)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Map, Value};
    use std::collections::BTreeSet;

    #[test]
    fn builtin_table_unpacks_every_name() {
        assert!(builtin_resources().count() > 50);
        for r in builtin_resources() {
            assert!(!r.kind.is_empty() && !r.version.is_empty(), "{r:?}");
            assert!(r.kind.chars().all(|c| c.is_ascii_alphanumeric()), "{r:?}");
            assert!(r.version.starts_with('v'), "{r:?}");
            let dns = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-';
            assert!(r.plural.chars().all(dns) && r.group.chars().all(dns), "{r:?}");
        }
        let kinds: Vec<&str> = builtin_resources().map(|r| r.kind).collect();
        assert!(kinds.windows(2).all(|w| w[0] <= w[1]), "sorted by kind");
    }

    #[test]
    fn builtin_table_covers_core_and_groups() {
        assert!(builtin_kinds("Pod").any(|r| r.group.is_empty() && r.plural == "pods"));
        assert!(builtin_kinds("Deployment").any(|r| r.group == "apps"));
        assert!(builtin_kinds("CustomResourceDefinition").any(|r| r.group == "apiextensions.k8s.io"));
        assert!(KUBERNETES_VERSION.starts_with("1."));
    }

    #[test]
    fn subresource_kinds_are_marked() {
        assert!(builtin_kinds("Scale").all(|r| r.subresource));
        assert!(builtin_kinds("TokenRequest").all(|r| r.subresource));
        assert!(builtin_kinds("Deployment").all(|r| !r.subresource));
        assert!(builtin_kinds("Eviction").any(|r| r.group == "policy" && r.subresource));
    }

    /// The member at the dotted `path` from the type of a kind, through objects.
    fn member(group: &str, version: &str, kind: &str, path: &str) -> ApiField {
        let mut api_type = api_type_of(group, version, kind).unwrap_or_else(|| panic!("no {group}/{version} {kind}"));
        let mut names = path.split('.').peekable();
        loop {
            let name = names.next().expect("a path has a name");
            let field = api_type
                .field(name)
                .unwrap_or_else(|| panic!("{api_type:?} has no {name}"));
            if names.peek().is_none() {
                return field;
            }
            api_type = field
                .leaf
                .api_type()
                .unwrap_or_else(|| panic!("{api_type:?}.{name} holds no object"));
        }
    }

    #[test]
    fn api_tables_unpack_and_are_sorted() {
        let count = API_TYPES.len() - 1;
        assert!(count > 500, "{count} API types");
        let types: Vec<ApiType> = (0..count).map(|i| ApiType(u16::try_from(i).unwrap())).collect();
        assert!(
            types
                .windows(2)
                .all(|w| (w[0].package(), w[0].name()) < (w[1].package(), w[1].name()))
        );
        for &ty in &types {
            let name = ty.name();
            assert!(
                !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric()),
                "{ty:?}"
            );
            assert!(ty.package().contains("/v"), "{ty:?}");
            assert_eq!(api_type(ty.package(), name), Some(ty));
            let names: Vec<&str> = ty.fields().map(|f| f.name).collect();
            assert!(names.windows(2).all(|w| w[0] < w[1]), "{ty:?}: {names:?}");
            for field in ty.fields() {
                assert_eq!(ty.field(field.name), Some(field));
                if let Some(target) = field.leaf.api_type() {
                    assert!(usize::from(target.0) < count, "{ty:?}.{}", field.name);
                }
                // What Go's encoding/json writes for a zero (null, absent) member: nothing, null, or a
                // zero value; null for pointers, lists and maps without omitempty, and for the leaves
                // whose MarshalJSON writes their zero value as null (struct members are never empty).
                let null_leaf = matches!(
                    field.leaf,
                    Leaf::Time
                        | Leaf::MicroTime
                        | Leaf::Free
                        | Leaf::FieldsV1
                        | Leaf::SchemaOrArray(_)
                        | Leaf::SchemaOrStrings(_)
                );
                let keeps_null = match (field.form, field.leaf) {
                    (Form::Value, Leaf::Bytes) => !field.omitempty,
                    (Form::Value, _) => null_leaf && !field.omitzero,
                    _ => !field.omitempty,
                };
                assert_eq!(field.keeps_null, keeps_null, "{ty:?}: {field:?}");
                assert!(!(field.keeps_null && field.omitted_when_zero()), "{ty:?}: {field:?}");
            }
        }
        let kinds: Vec<(&str, &str, &str)> = api_kinds().map(|(g, v, t)| (g, v, t.name())).collect();
        assert!(kinds.len() > 100 && kinds.windows(2).all(|w| w[0] < w[1]));
        let object_meta = api_type("meta/v1", "ObjectMeta");
        for (group, version, api_type) in api_kinds() {
            assert_eq!(api_type_of(group, version, api_type.name()), Some(api_type));
            assert_eq!(
                api_type.field("metadata").unwrap().leaf.api_type(),
                object_meta,
                "{api_type:?}"
            );
        }
        assert!(
            API_SOURCES.iter().any(|s| s.starts_with("k8s.io/api ")),
            "{API_SOURCES:?}"
        );
    }

    #[test]
    fn api_fields_of_a_deployment() {
        let deployment = |path| member("apps", "v1", "Deployment", path);
        let containers = deployment("spec.template.spec.containers");
        assert_eq!(
            (containers.form, containers.omitempty, containers.keeps_null),
            (Form::List, false, true)
        );
        assert_eq!(containers.leaf, Leaf::Object(api_type("core/v1", "Container").unwrap()));
        // `resources` has omitempty but is a struct: always written, `{}` when empty or absent.
        let resources = deployment("spec.template.spec.containers.resources");
        assert!(resources.omitempty && resources.form == Form::Value && !resources.omitted_when_zero());
        assert_eq!(
            resources.leaf.api_type().map(ApiType::name),
            Some("ResourceRequirements")
        );
        let env = deployment("spec.template.spec.containers.env");
        assert!(env.omitempty && env.form == Form::List && env.omitted_when_zero() && !env.keeps_null);
        let limits = deployment("spec.template.spec.containers.resources.limits");
        assert_eq!(
            (limits.form, limits.leaf, limits.omitempty),
            (Form::Map, Leaf::Quantity, true)
        );
        let created = deployment("metadata.creationTimestamp");
        assert_eq!(
            (created.form, created.leaf, created.omitempty, created.omitzero),
            (Form::Value, Leaf::Time, true, true)
        );
        assert!(created.omitted_when_zero() && !created.keeps_null);
        // Without omitzero, a zero Time is written as null.
        let probed = member("", "v1", "PersistentVolumeClaim", "status.conditions.lastProbeTime");
        assert!(probed.omitempty && !probed.omitzero && probed.keeps_null && !probed.omitted_when_zero());
        let annotations = deployment("spec.template.metadata.annotations");
        assert_eq!(
            (annotations.form, annotations.leaf, annotations.omitempty),
            (Form::Map, Leaf::String, true)
        );
        let links = deployment("spec.template.spec.enableServiceLinks");
        assert_eq!(
            (links.form, links.leaf, links.omitempty),
            (Form::Pointer, Leaf::Bool, true)
        );
        let replicas = deployment("spec.replicas");
        assert_eq!((replicas.form, replicas.leaf), (Form::Pointer, Leaf::Int));
        let selector = deployment("spec.selector");
        assert!(selector.form == Form::Pointer && !selector.omitempty && selector.keeps_null);
        let strategy = deployment("spec.strategy");
        assert!(strategy.omitempty && !strategy.omitted_when_zero());
        assert_eq!(deployment("status").leaf, Leaf::Status);
        let name = deployment("spec.template.spec.containers.name");
        assert!(!name.omitempty && !name.omitted_when_zero() && !name.keeps_null);
    }

    #[test]
    fn api_fields_of_a_custom_resource_definition() {
        let crd = |path| member("apiextensions.k8s.io", "v1", "CustomResourceDefinition", path);
        let preserve = crd("spec.preserveUnknownFields");
        assert_eq!(
            (preserve.form, preserve.leaf, preserve.omitempty),
            (Form::Value, Leaf::Bool, true)
        );
        assert!(preserve.omitted_when_zero(), "`false` is dropped");
        let categories = crd("spec.names.categories");
        assert_eq!(
            (categories.form, categories.leaf, categories.omitempty),
            (Form::List, Leaf::String, true)
        );
        assert!(crd("spec.versions").keeps_null);
        let props = api_type("apiextensions/v1", "JSONSchemaProps").unwrap();
        assert_eq!(crd("spec.versions.schema.openAPIV3Schema").leaf, Leaf::Object(props));
        let field = |name| props.field(name).unwrap();
        assert_eq!(
            (field("items").form, field("items").leaf),
            (Form::Pointer, Leaf::SchemaOrArray(props))
        );
        assert_eq!(field("additionalProperties").leaf, Leaf::SchemaOrBool(props));
        assert_eq!(
            (field("dependencies").form, field("dependencies").leaf),
            (Form::Map, Leaf::SchemaOrStrings(props))
        );
        assert_eq!(
            (field("properties").form, field("properties").leaf),
            (Form::Map, Leaf::Object(props))
        );
        assert_eq!(
            (field("default").form, field("default").leaf),
            (Form::Pointer, Leaf::Free)
        );
        assert_eq!((field("enum").form, field("enum").leaf), (Form::List, Leaf::Free));
        assert_eq!(
            (field("maximum").form, field("maximum").leaf),
            (Form::Pointer, Leaf::Float)
        );
        assert_eq!(field("x-kubernetes-preserve-unknown-fields").form, Form::Pointer);
        // An empty struct: `subresources.status: {}` is kept, and has no members.
        let status = crd("spec.versions.subresources.status");
        assert_eq!(status.form, Form::Pointer);
        assert_eq!(status.leaf.api_type().map(|t| t.fields().len()), Some(0));
        assert_eq!(crd("status").leaf, Leaf::Status);
    }

    /// Every member of every type is found by its name, and a name the type lacks is not (the
    /// hash scan compares the names, so a shared hash cannot mislead it).
    #[test]
    fn every_member_is_found_by_its_name() {
        for ty in (0..API_TYPES.len() - 1).map(|i| ApiType(u16::try_from(i).unwrap())) {
            for field in ty.fields() {
                assert_eq!(ty.field(field.name), Some(field), "{ty:?}.{}", field.name);
            }
            assert_eq!(ty.field("noSuchMember"), None, "{ty:?}");
            assert_eq!(ty.field(""), None, "{ty:?}");
        }
    }

    #[test]
    fn api_kinds_cover_the_served_kinds() {
        assert!(api_type_of("", "v1", "Pod").is_some());
        assert!(api_type_of("apiregistration.k8s.io", "v1", "APIService").is_some());
        assert!(api_type_of("apps", "v1", "DeploymentList").is_none());
        assert!(
            api_type_of("extensions", "v1beta1", "Deployment").is_none(),
            "removed in 1.16"
        );
        assert!(api_type_of("apps", "v1", "Pod").is_none());
        // A kind's status is left out, unless its type is reached otherwise.
        let claim = member("apps", "v1", "StatefulSet", "spec.volumeClaimTemplates.status");
        assert_eq!(
            claim.leaf.api_type().map(ApiType::name),
            Some("PersistentVolumeClaimStatus")
        );
        assert!(api_type("core/v1", "PodStatus").is_none());
        let kind = |group, kind| api_type_of(group, "v1", kind).unwrap();
        assert_eq!(kind("", "Pod").status_type(), None);
        assert_eq!(
            kind("", "PersistentVolumeClaim").status_type(),
            api_type("core/v1", "PersistentVolumeClaimStatus")
        );
        let crd_status = kind("apiextensions.k8s.io", "CustomResourceDefinition").status_type();
        assert_eq!(crd_status.map(ApiType::name), Some("CustomResourceDefinitionStatus"));
        let extra = member("certificates.k8s.io", "v1", "CertificateSigningRequest", "spec.extra");
        assert_eq!((extra.form, extra.leaf), (Form::MapOfLists, Leaf::String));
        let renewed = member("coordination.k8s.io", "v1", "Lease", "spec.renewTime");
        assert_eq!((renewed.form, renewed.leaf), (Form::Pointer, Leaf::MicroTime));
        let target = member("", "v1", "Service", "spec.ports.targetPort");
        assert_eq!(
            (target.form, target.leaf, target.omitempty),
            (Form::Value, Leaf::IntOrString, true)
        );
        let data = member("apps", "v1", "ControllerRevision", "data");
        assert_eq!((data.form, data.leaf, data.keeps_null), (Form::Value, Leaf::Free, true));
        let fields = member("", "v1", "ConfigMap", "metadata.managedFields.fieldsV1");
        assert_eq!((fields.form, fields.leaf), (Form::Pointer, Leaf::FieldsV1));
        let binary = member("", "v1", "ConfigMap", "binaryData");
        assert_eq!((binary.form, binary.leaf), (Form::Map, Leaf::Bytes));
    }

    /// The scopes of `api_kinds.tsv` (from `+genclient:nonNamespaced`) are k8s-openapi's (from
    /// the API server's OpenAPI document), on kinds of every shape.
    #[test]
    fn api_scopes_match_k8s_openapi() {
        use k8s_openapi::api;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
        use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
        use std::any::TypeId;
        fn same<T: k8s_openapi::Resource>()
        where
            T::Scope: 'static,
        {
            let cluster = TypeId::of::<T::Scope>() == TypeId::of::<k8s_openapi::ClusterResourceScope>();
            assert_eq!(
                api_cluster_scoped(T::GROUP, T::VERSION, T::KIND),
                Some(cluster),
                "{} {}",
                T::API_VERSION,
                T::KIND
            );
        }
        same::<api::core::v1::Namespace>();
        same::<api::core::v1::PersistentVolume>();
        same::<api::core::v1::Node>();
        same::<api::core::v1::ConfigMap>();
        same::<api::core::v1::Service>();
        same::<api::core::v1::Binding>();
        same::<api::rbac::v1::ClusterRole>();
        same::<api::rbac::v1::ClusterRoleBinding>();
        same::<api::rbac::v1::Role>();
        same::<api::admissionregistration::v1::ValidatingWebhookConfiguration>();
        same::<api::admissionregistration::v1::MutatingWebhookConfiguration>();
        same::<api::admissionregistration::v1::ValidatingAdmissionPolicyBinding>();
        same::<api::scheduling::v1::PriorityClass>();
        same::<api::storage::v1::StorageClass>();
        same::<api::storage::v1::CSIStorageCapacity>();
        same::<api::networking::v1::IngressClass>();
        same::<api::networking::v1::Ingress>();
        same::<api::authentication::v1::TokenReview>();
        same::<api::authorization::v1::LocalSubjectAccessReview>();
        same::<api::flowcontrol::v1::FlowSchema>();
        same::<api::apps::v1::Deployment>();
        same::<api::certificates::v1::CertificateSigningRequest>();
        same::<apiextensions::CustomResourceDefinition>();
        same::<apiregistration::APIService>();
        assert_eq!(api_cluster_scoped("apps", "v1", "DeploymentList"), None);
    }

    /// The kinds of the field tables are k8s-openapi's resources (which come from the API
    /// server's OpenAPI document), less those without an ObjectMeta.
    #[test]
    fn api_kinds_are_the_builtin_resources() {
        for (group, version, api_type) in api_kinds() {
            assert!(
                builtin_kinds(api_type.name()).any(|r| r.group == group && r.version == version),
                "{group}/{version} {api_type:?} is not a k8s-openapi resource"
            );
        }
        let without: Vec<String> = builtin_resources()
            .filter(|r| api_type_of(r.group, r.version, r.kind).is_none())
            .map(|r| format!("{}/{} {}", r.group, r.version, r.kind))
            .collect();
        // The discovery documents and Status: no ObjectMeta.
        assert_eq!(
            without,
            [
                "/v1 APIGroup",
                "/v1 APIGroupList",
                "/v1 APIResourceList",
                "/v1 APIVersions",
                "/v1 Status"
            ]
        );
    }

    /// The member names of every object type reachable from each kind's JSON schema in
    /// k8s-openapi (the crate the other tables come from) against the table's, walking both in
    /// step (a member's object type in one is its object type in the other), and their forms.
    #[test]
    fn api_fields_match_k8s_openapi() {
        use k8s_openapi::api;
        use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1 as apiextensions;
        use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1 as apiregistration;
        let (mut differences, mut compared) = (BTreeSet::new(), BTreeSet::new());
        macro_rules! cross_check {
            ($($kind:ty),* $(,)?) => {
                $(compared.extend(cross_check::<$kind>(&mut differences));)*
            };
        }
        cross_check!(
            api::apps::v1::Deployment,
            api::apps::v1::StatefulSet,
            api::apps::v1::DaemonSet,
            api::apps::v1::ReplicaSet,
            api::apps::v1::ControllerRevision,
            api::batch::v1::Job,
            api::batch::v1::CronJob,
            api::core::v1::Pod,
            api::core::v1::PodTemplate,
            api::core::v1::Service,
            api::core::v1::ConfigMap,
            api::core::v1::Secret,
            api::core::v1::ServiceAccount,
            api::core::v1::PersistentVolumeClaim,
            api::core::v1::PersistentVolume,
            api::core::v1::Namespace,
            api::core::v1::LimitRange,
            api::core::v1::ResourceQuota,
            api::networking::v1::Ingress,
            api::networking::v1::IngressClass,
            api::networking::v1::NetworkPolicy,
            api::rbac::v1::Role,
            api::rbac::v1::ClusterRole,
            api::rbac::v1::RoleBinding,
            api::rbac::v1::ClusterRoleBinding,
            api::autoscaling::v2::HorizontalPodAutoscaler,
            api::policy::v1::PodDisruptionBudget,
            api::admissionregistration::v1::ValidatingWebhookConfiguration,
            api::admissionregistration::v1::MutatingWebhookConfiguration,
            api::admissionregistration::v1::ValidatingAdmissionPolicy,
            api::scheduling::v1::PriorityClass,
            api::storage::v1::StorageClass,
            api::storage::v1::CSIDriver,
            api::coordination::v1::Lease,
            api::discovery::v1::EndpointSlice,
            api::node::v1::RuntimeClass,
            api::certificates::v1::CertificateSigningRequest,
            api::resource::v1::ResourceClaim,
            api::resource::v1::ResourceClaimTemplate,
            api::resource::v1::ResourceSlice,
            api::resource::v1::DeviceClass,
            apiextensions::CustomResourceDefinition,
            apiregistration::APIService,
        );
        // The CRD's own status, listed for crd-schema-fields (the walk above stops at `status`).
        let status = schemars::SchemaGenerator::default()
            .into_root_schema_for::<apiextensions::CustomResourceDefinitionStatus>();
        let status = serde_json::to_value(&status).unwrap();
        let defs = status
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let crd = api_type_of("apiextensions.k8s.io", "v1", "CustomResourceDefinition").unwrap();
        let status_type = crd.status_type().expect("the CRD's status type is listed");
        let mut seen = BTreeSet::new();
        compare(&defs, &status, status_type, &mut seen, &mut differences);
        assert!(seen.len() >= 3, "{seen:?}");
        // k8s-openapi 0.29 (v1_37) was generated from a slightly newer Kubernetes than the
        // table's sources: members added upstream since.
        let known = [
            "resource/v1.DeviceCounterConsumption.compatibilityGroups: only in k8s-openapi",
            "resource/v1.DeviceSubRequest.derivedAttributes: only in k8s-openapi",
            "resource/v1.ExactDeviceRequest.derivedAttributes: only in k8s-openapi",
        ];
        let known: BTreeSet<String> = known.into_iter().map(String::from).collect();
        assert_eq!(differences, known);
        assert!(compared.len() > 300, "{} types compared", compared.len());
    }

    /// Compares the kind `T` of k8s-openapi with the table; returns the table's types compared.
    fn cross_check<T: k8s_openapi::Resource + schemars::JsonSchema>(
        differences: &mut BTreeSet<String>,
    ) -> BTreeSet<ApiType> {
        let root = schemars::SchemaGenerator::default().into_root_schema_for::<T>();
        let root = serde_json::to_value(&root).unwrap();
        let api_type = api_type_of(T::GROUP, T::VERSION, T::KIND)
            .unwrap_or_else(|| panic!("no {}/{} {}", T::GROUP, T::VERSION, T::KIND));
        let defs = root
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let mut seen = BTreeSet::new();
        compare(&defs, &root, api_type, &mut seen, differences);
        seen
    }

    fn compare(
        defs: &Map<String, Value>,
        schema: &Value,
        api_type: ApiType,
        seen: &mut BTreeSet<ApiType>,
        differences: &mut BTreeSet<String>,
    ) {
        if !seen.insert(api_type) {
            return;
        }
        let none = Map::new();
        let properties = schema.get("properties").and_then(Value::as_object).unwrap_or(&none);
        for name in properties.keys().filter(|name| api_type.field(name).is_none()) {
            differences.insert(format!("{api_type:?}.{name}: only in k8s-openapi"));
        }
        for field in api_type.fields() {
            let Some(property) = properties.get(field.name) else {
                differences.insert(format!("{api_type:?}.{}: only in the table", field.name));
                continue;
            };
            let form = match (property.get("additionalProperties"), property.get("type")) {
                (Some(values), _) if values.get("type").is_some_and(|t| t == "array") => Form::MapOfLists,
                (Some(_), _) => Form::Map,
                (None, Some(t)) if t == "array" => Form::List,
                _ => Form::Value,
            };
            if form
                != if field.form == Form::Pointer {
                    Form::Value
                } else {
                    field.form
                }
            {
                differences.insert(format!(
                    "{api_type:?}.{}: {form:?} in k8s-openapi, {:?} in the table",
                    field.name, field.form
                ));
            }
            if field.leaf == Leaf::Status {
                continue;
            }
            match (object_schema(defs, property), field.leaf.api_type()) {
                (Some((def, schema)), Some(target)) => {
                    if def.ends_with(&format!(".{}.{}", target.package().replace('/', "."), target.name())) {
                        compare(defs, schema, target, seen, differences);
                    } else {
                        differences.insert(format!(
                            "{api_type:?}.{}: {def} in k8s-openapi, {target:?} in the table",
                            field.name
                        ));
                    }
                }
                (None, None) => {}
                (None, Some(target)) if target.fields().len() == 0 => {}
                (def, _) => {
                    let def = def.map_or("no object", |(def, _)| def);
                    differences.insert(format!(
                        "{api_type:?}.{}: {def} in k8s-openapi, {:?} in the table",
                        field.name, field.leaf
                    ));
                }
            }
        }
    }

    /// The object schema (one with `properties`) a member's schema leads to through `$ref`,
    /// `items`, `additionalProperties` and `oneOf`, with its name.
    fn object_schema<'a>(defs: &'a Map<String, Value>, schema: &'a Value) -> Option<(&'a str, &'a Value)> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let (name, def) = defs.get_key_value(reference.strip_prefix("#/$defs/")?)?;
            return if def.get("properties").is_some() {
                Some((name, def))
            } else {
                object_schema(defs, def)
            };
        }
        for key in ["items", "additionalProperties"] {
            if let Some(found) = schema.get(key).and_then(|inner| object_schema(defs, inner)) {
                return Some(found);
            }
        }
        schema
            .get("oneOf")
            .and_then(Value::as_array)?
            .iter()
            .find_map(|inner| object_schema(defs, inner))
    }
}
