//! Kubernetes tables generated at build time from k8s-openapi (see `build.rs`).

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

/// How a field holds its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A scalar, a list of scalars or a free-form value.
    Scalar,
    /// One object of the named type.
    One(&'static str),
    /// A list of objects of the named type.
    List(&'static str),
    /// A map from strings to objects of the named type.
    Map(&'static str),
}

/// One JSON field of an object type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// JSON name.
    pub name: &'static str,
    /// Shape of its value.
    pub shape: Shape,
}

/// An object type of the CustomResourceDefinition API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectType {
    /// Short type name, e.g. `CustomResourceDefinitionSpec`.
    pub name: &'static str,
    /// Its fields, sorted by name; `None` for free-form or scalar-encoded types.
    pub fields: Option<&'static [Field]>,
}

impl ObjectType {
    /// The field named `name`, if the type has it.
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        Self::field_in(self.fields?, name)
    }

    /// The field named `name` among a type's `fields` (sorted by name).
    pub fn field_in(fields: &'static [Field], name: &str) -> Option<&'static Field> {
        fields.binary_search_by(|f| f.name.cmp(name)).ok().map(|i| &fields[i])
    }
}

include!(concat!(env!("OUT_DIR"), "/k8s_tables.rs"));

/// The object type named `name` (short name, e.g. `CustomResourceDefinitionNames`).
pub fn object_type(name: &str) -> Option<&'static ObjectType> {
    OBJECT_TYPES
        .binary_search_by(|t| t.name.cmp(name))
        .ok()
        .map(|i| &OBJECT_TYPES[i])
}

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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn crd_graph_is_complete() {
        let crd = object_type("CustomResourceDefinition").unwrap();
        assert_eq!(
            crd.field("spec").unwrap().shape,
            Shape::One("CustomResourceDefinitionSpec")
        );
        let spec = object_type("CustomResourceDefinitionSpec").unwrap();
        assert_eq!(
            spec.field("versions").unwrap().shape,
            Shape::List("CustomResourceDefinitionVersion")
        );
        let version = object_type("CustomResourceDefinitionVersion").unwrap();
        assert!(version.field("additionalPrinterColumns").is_some());
        assert!(
            object_type("JSONSchemaProps")
                .unwrap()
                .field("x-kubernetes-list-map-keys")
                .is_some()
        );
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(OBJECT_TYPES.windows(2).all(|w| w[0].name < w[1].name));
        for t in OBJECT_TYPES {
            if let Some(fields) = t.fields {
                assert!(fields.windows(2).all(|w| w[0].name < w[1].name), "{}", t.name);
            }
        }
    }
}
