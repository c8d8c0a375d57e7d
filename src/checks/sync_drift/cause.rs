//! Why the stored object differs from what was applied ([`Cause`], the rules of sync-drift's
//! findings), and what each GitOps tool makes of it ([`effect`]).
//!
//! The effects are read from the tools' source, not guessed (the policy's README gives the
//! evidence, file by file):
//! - **Argo CD** (legacy diff, its default) normalises built-in kinds by decoding the manifest
//!   into client-go's types, which drops empty `omitempty` values and canonicalises quantities
//!   and base64, unless the manifest does not decode strictly (an unknown field anywhere in it):
//!   then the whole object is compared as written. Kinds outside client-go's scheme (custom
//!   resources, CustomResourceDefinitions, APIService) go through a JSON merge patch, where an
//!   explicit empty value is a value and a null is only a deletion. Before any diff it drops a
//!   null or empty `metadata.annotations` (gitops-engine's `removeNamespaceAnnotation`) and moves
//!   a Secret's `stringData` into `data` (`NormalizeSecret`). Since 3.0 it ignores `status`
//!   and no longer ignores a CRD's `spec.preserveUnknownFields`. Its server-side diff sees what
//!   the API server stores. Its sync does not ask for strict field validation: gitops-engine's
//!   apply leaves kubectl's field-validation directive unset, which the API server reads as
//!   `Warn` (`Validate=true`, the default, turns on only kubectl's client-side validation, which
//!   kubectl skips against an API server that validates fields itself), so a field no type or
//!   schema declares is dropped with a warning, the sync succeeds and the diff keeps showing it.
//! - **Flux** decodes built-in kinds into client-go's types before a server-side dry-run (unknown
//!   fields of built-ins vanish there, a Secret's `stringData` becomes `data`: `ssa/normalize`)
//!   and compares what the API server returns, so only fields a schema does not declare make its
//!   dry-run apply fail.
//! - **Fleet** vendors Argo CD's legacy diff (the same normalisation) and always ignores
//!   `status`; it deploys with Helm (v4), whose strict field validation refuses unknown fields.
//! - **`kubectl apply`** sends the manifest as written in a three-way patch: anything the API
//!   server stores differently is sent again on every run (`configured`), and unknown fields are
//!   refused under its default `--validate=strict`. The object's own annotations are never
//!   empty in what it sends: it writes last-applied into them, creating the map.
//!
//! Two rewrites reach `kubectl apply` alone: the API server clears `metadata.namespace` of a
//! cluster-scoped object (k8s.io/apiserver `EnsureObjectNamespaceMatchesRequestNamespace`), which
//! kubectl sends as written (cli-runtime's builder sets or checks the namespace of namespaced
//! objects only) while Argo CD (`NormalizeTargetObjects`, and `removeNamespaceAnnotation` in its
//! diff) and Fleet (`clearNamespace`) clear it first; and the Service defaults that replace or
//! remove an applied value (`SetDefaults_Service`), which Argo CD and Fleet apply to the
//! predicted live object before comparing (`Scheme.Default` in their diff's `applyPatch`). Flux
//! compares the API server's dry-run, which holds neither.

use crate::settings::string_enum;

/// Why a path of the applied manifest is not stored as applied: the rule of a finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Cause {
    /// A null, or an empty value in a field the Go type serializes with `omitempty`: dropped.
    NullOrEmpty,
    /// `spec.preserveUnknownFields: false` in a CRD: the default, dropped.
    PreserveUnknownFields,
    /// A quantity not in the form the API server writes back.
    Quantity,
    /// A field the built-in kind's type does not declare: dropped when decoded.
    UnknownField,
    /// A field of a custom resource its CRD's structural schema does not declare: pruned.
    PrunedField,
    /// `creationTimestamp: null`: dropped, or replaced by the creation time.
    CreationTimestamp,
    /// A `status` stanza: the API server ignores it when the object is written.
    Status,
    /// A Secret's `stringData`: merged into `data` and never stored or returned.
    StringData,
    /// Base64 text (a Secret's `data`, a ConfigMap's `binaryData`) the API server decodes and
    /// writes back otherwise: line breaks, padding bits that are not zero.
    Base64,
    /// `metadata.namespace` of a cluster-scoped object: cleared by the API server.
    Namespace,
    /// A value the API server's defaulting replaces or removes (`SetDefaults_Service`: a port's
    /// `targetPort: 0`, `sessionAffinityConfig` without `sessionAffinity: ClientIP`).
    Defaulted,
    /// The live object holds another value than the one applied, or lacks it, for none of the
    /// reasons above: a mutating webhook, a controller or an edit changed it after apply.
    Mutated,
}

impl Cause {
    /// Every cause, in the order findings of one path are preferred.
    pub const ALL: [Cause; 12] = [
        Cause::NullOrEmpty,
        Cause::PreserveUnknownFields,
        Cause::Quantity,
        Cause::Base64,
        Cause::StringData,
        Cause::UnknownField,
        Cause::PrunedField,
        Cause::CreationTimestamp,
        Cause::Status,
        Cause::Namespace,
        Cause::Defaulted,
        Cause::Mutated,
    ];

    /// The rule id of the cause's findings (and its key in the `causes` setting).
    pub fn rule(self) -> &'static str {
        match self {
            Cause::NullOrEmpty => "nullOrEmpty",
            Cause::PreserveUnknownFields => "preserveUnknownFields",
            Cause::Quantity => "quantity",
            Cause::UnknownField => "unknownField",
            Cause::PrunedField => "prunedField",
            Cause::CreationTimestamp => "creationTimestamp",
            Cause::Status => "status",
            Cause::StringData => "stringData",
            Cause::Base64 => "base64",
            Cause::Namespace => "namespace",
            Cause::Defaulted => "defaulted",
            Cause::Mutated => "mutated",
        }
    }
}

/// A GitOps tool whose diff the finding is about: the values of the `tools` setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Tool {
    /// Argo CD.
    ArgoCd,
    /// Flux (kustomize-controller and helm-controller).
    Flux,
    /// Rancher Fleet.
    Fleet,
    /// `kubectl apply`, client-side.
    Kubectl,
}

string_enum!(Tool {
    "argocd" => Tool::ArgoCd,
    "flux" => Tool::Flux,
    "fleet" => Tool::Fleet,
    "kubectl" => Tool::Kubectl,
});

impl Tool {
    /// Every tool.
    pub const ALL: [Tool; 4] = [Tool::ArgoCd, Tool::Flux, Tool::Fleet, Tool::Kubectl];

    /// The GitOps tools, the default of the `tools` setting: what `kubectl apply` alone would
    /// show is reported only to those who say they apply with it.
    pub const GITOPS: [Tool; 3] = [Tool::ArgoCd, Tool::Flux, Tool::Fleet];

    /// The tool's name in a sentence.
    pub fn name(self) -> &'static str {
        match self {
            Tool::ArgoCd => "Argo CD",
            Tool::Flux => "Flux",
            Tool::Fleet => "Fleet",
            Tool::Kubectl => "kubectl",
        }
    }
}

/// How the GitOps tools handle the kind, which decides what they make of a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// A kind of client-go's scheme: decoded into its Go type by Argo CD, Flux and Fleet.
    Typed,
    /// A kind the API server decodes into Go types but client-go's scheme lacks
    /// (CustomResourceDefinition): compared as JSON by Argo CD and Fleet.
    Untyped,
    /// A custom resource: stored as JSON, pruned to its CRD's structural schema.
    Custom,
}

/// What a tool does with a difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// It reports the object changed (OutOfSync, Modified, re-applied) on every comparison.
    OutOfSync,
    /// Its apply or diff fails on it.
    Fails,
    /// `kubectl apply` sends it again and says `configured` on every run.
    Churn,
}

/// What decides a tool's view of one difference besides its cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Facts {
    /// How the tools handle the kind.
    pub class: Class,
    /// The applied value is `null` (rather than empty).
    pub null: bool,
    /// The path is the object's own `metadata.annotations`, which Argo CD and Fleet drop when
    /// null or empty before comparing.
    pub own_annotations: bool,
    /// The manifest holds a field its type does not declare, so Argo CD and Fleet compare the
    /// whole object as written, without their normalisation of empty values and quantities.
    pub unnormalised: bool,
}

/// What `tool` does with a difference of `cause`, if anything.
pub fn effect(tool: Tool, cause: Cause, facts: Facts) -> Option<Effect> {
    use Effect::{Churn, Fails, OutOfSync};
    match cause {
        // kubectl writes last-applied into the object's own annotations (creating the map), so
        // it never sends them null or empty; Argo CD and Fleet delete a null or empty map before
        // they compare; Flux compares what the API server returns.
        Cause::NullOrEmpty if facts.own_annotations => None,
        Cause::NullOrEmpty if facts.null => match (tool, facts.class) {
            // A null is only a deletion in the tools' merge patches; kubectl's strategic merge
            // patch (built-in kinds) sends it again.
            (Tool::Kubectl, Class::Typed | Class::Untyped) => Some(Churn),
            _ => None,
        },
        Cause::NullOrEmpty => match tool {
            Tool::Kubectl => Some(Churn),
            Tool::Flux => None,
            _ => match facts.class {
                Class::Typed => facts.unnormalised.then_some(OutOfSync),
                Class::Untyped | Class::Custom => Some(OutOfSync),
            },
        },
        Cause::PreserveUnknownFields => match tool {
            Tool::Flux => None,
            Tool::Kubectl => Some(Churn),
            _ => Some(OutOfSync),
        },
        Cause::Quantity | Cause::Base64 => match tool {
            Tool::Kubectl => Some(Churn),
            Tool::Flux => None,
            _ => (facts.class != Class::Typed || facts.unnormalised).then_some(OutOfSync),
        },
        // Fleet's Helm and kubectl validate strictly; Argo CD's sync does not (the field is
        // dropped with a warning, and its diff, which compares a manifest that does not decode
        // strictly as written, shows it forever); Flux decodes built-in kinds client-side, where
        // unknown fields vanish.
        Cause::UnknownField | Cause::PrunedField => match tool {
            Tool::Flux if facts.class == Class::Typed => None,
            Tool::ArgoCd => Some(OutOfSync),
            _ => Some(Fails),
        },
        Cause::CreationTimestamp => (tool == Tool::Kubectl && facts.class != Class::Custom).then_some(Churn),
        Cause::Status => (tool == Tool::Kubectl).then_some(Churn),
        // Argo CD and Fleet (`NormalizeSecret`) and Flux (`normalizeSecret`) move it into
        // `data` before they compare; kubectl sends it again (kubernetes/kubernetes#87736).
        Cause::StringData => (tool == Tool::Kubectl).then_some(Churn),
        // kubectl sends the namespace, and the defaulted value, again on every run; Argo CD and
        // Fleet clear a cluster-scoped object's namespace and run the defaulting functions on the
        // object they predict before they compare; Flux compares the API server's dry-run.
        Cause::Namespace | Cause::Defaulted => (tool == Tool::Kubectl).then_some(Churn),
        Cause::Mutated => Some(if tool == Tool::Kubectl { Churn } else { OutOfSync }),
    }
}

/// What `effect` means for `tool`, in a sentence's words.
pub fn describe(tool: Tool, effect: Effect) -> &'static str {
    match (tool, effect) {
        (Tool::ArgoCd, Effect::Fails) => "Argo CD's sync fails on it",
        (Tool::ArgoCd, Effect::OutOfSync) => "Argo CD shows it OutOfSync forever",
        (Tool::Fleet, Effect::OutOfSync) => "Fleet reports it Modified forever",
        (Tool::Fleet, Effect::Fails) => "Fleet's Helm deployment fails on it (strict field validation)",
        (Tool::Flux, Effect::OutOfSync) => "Flux applies it again on every reconciliation",
        (Tool::Flux, Effect::Fails) => "Flux's dry-run apply fails on it",
        (Tool::Kubectl, Effect::Fails) => "`kubectl apply` refuses it (strict field validation, its default)",
        (_, Effect::Churn) => "`kubectl apply` says `configured` on every run",
        (_, Effect::OutOfSync) => "it reports the object changed forever",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(class: Class) -> Facts {
        Facts {
            class,
            null: false,
            own_annotations: false,
            unnormalised: false,
        }
    }

    #[test]
    fn empty_values_of_built_in_kinds_reach_argo_cd_only_when_it_cannot_normalise() {
        let typed = facts(Class::Typed);
        assert_eq!(effect(Tool::ArgoCd, Cause::NullOrEmpty, typed), None);
        assert_eq!(effect(Tool::Kubectl, Cause::NullOrEmpty, typed), Some(Effect::Churn));
        let unnormalised = Facts {
            unnormalised: true,
            ..typed
        };
        assert_eq!(
            effect(Tool::ArgoCd, Cause::NullOrEmpty, unnormalised),
            Some(Effect::OutOfSync)
        );
        assert_eq!(
            effect(Tool::Fleet, Cause::Quantity, unnormalised),
            Some(Effect::OutOfSync)
        );
        assert_eq!(effect(Tool::Flux, Cause::Quantity, unnormalised), None);
        let crd = facts(Class::Untyped);
        assert_eq!(effect(Tool::ArgoCd, Cause::NullOrEmpty, crd), Some(Effect::OutOfSync));
    }

    #[test]
    fn nulls_matter_to_kubectl_alone_and_not_in_custom_resources() {
        let null = Facts {
            null: true,
            ..facts(Class::Typed)
        };
        for tool in [Tool::ArgoCd, Tool::Flux, Tool::Fleet] {
            assert_eq!(effect(tool, Cause::NullOrEmpty, null), None);
        }
        assert_eq!(effect(Tool::Kubectl, Cause::NullOrEmpty, null), Some(Effect::Churn));
        let custom = Facts {
            class: Class::Custom,
            ..null
        };
        assert_eq!(effect(Tool::Kubectl, Cause::NullOrEmpty, custom), None);
        let annotations = Facts {
            own_annotations: true,
            ..null
        };
        assert_eq!(effect(Tool::Kubectl, Cause::NullOrEmpty, annotations), None);
    }

    #[test]
    fn undeclared_fields_fail_every_strict_apply_and_stay_in_argo_cds_diff() {
        assert_eq!(effect(Tool::Flux, Cause::UnknownField, facts(Class::Typed)), None);
        assert_eq!(
            effect(Tool::Flux, Cause::PrunedField, facts(Class::Custom)),
            Some(Effect::Fails)
        );
        // Fleet's Helm validates strictly; Argo CD's sync does not, and its diff shows the field.
        for cause in [Cause::UnknownField, Cause::PrunedField] {
            for class in [Class::Typed, Class::Custom] {
                assert_eq!(effect(Tool::ArgoCd, cause, facts(class)), Some(Effect::OutOfSync));
            }
        }
        assert_eq!(
            effect(Tool::Fleet, Cause::UnknownField, facts(Class::Typed)),
            Some(Effect::Fails)
        );
        assert_eq!(
            effect(Tool::Kubectl, Cause::UnknownField, facts(Class::Typed)),
            Some(Effect::Fails)
        );
        assert_eq!(effect(Tool::ArgoCd, Cause::Status, facts(Class::Typed)), None);
        assert_eq!(
            effect(Tool::Fleet, Cause::Mutated, facts(Class::Custom)),
            Some(Effect::OutOfSync)
        );
    }

    #[test]
    fn the_objects_own_empty_annotations_reach_no_tool() {
        // kubectl writes last-applied into them; Argo CD and Fleet delete an empty map first.
        for null in [false, true] {
            for class in [Class::Typed, Class::Untyped, Class::Custom] {
                let annotations = Facts {
                    null,
                    own_annotations: true,
                    unnormalised: true,
                    ..facts(class)
                };
                for tool in Tool::ALL {
                    assert_eq!(
                        effect(tool, Cause::NullOrEmpty, annotations),
                        None,
                        "{tool:?} {class:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn cleared_namespaces_and_defaulted_values_reach_kubectl_alone() {
        for class in [Class::Typed, Class::Untyped, Class::Custom] {
            let facts = Facts {
                unnormalised: true,
                ..facts(class)
            };
            for cause in [Cause::Namespace, Cause::Defaulted] {
                assert_eq!(effect(Tool::Kubectl, cause, facts), Some(Effect::Churn));
                for tool in [Tool::ArgoCd, Tool::Flux, Tool::Fleet] {
                    assert_eq!(effect(tool, cause, facts), None, "{tool:?} {cause:?} {class:?}");
                }
            }
        }
    }

    #[test]
    fn string_data_and_base64_reach_kubectl_and_unnormalised_diffs() {
        let typed = facts(Class::Typed);
        assert_eq!(effect(Tool::Kubectl, Cause::StringData, typed), Some(Effect::Churn));
        for tool in [Tool::ArgoCd, Tool::Flux, Tool::Fleet] {
            assert_eq!(effect(tool, Cause::StringData, typed), None);
            assert_eq!(effect(tool, Cause::Base64, typed), None);
        }
        assert_eq!(effect(Tool::Kubectl, Cause::Base64, typed), Some(Effect::Churn));
        let unnormalised = Facts {
            unnormalised: true,
            ..typed
        };
        assert_eq!(
            effect(Tool::ArgoCd, Cause::Base64, unnormalised),
            Some(Effect::OutOfSync)
        );
    }
}
