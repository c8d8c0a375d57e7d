//! Where a drift is: a path into an object, written the way each reader expects it. The API
//! server's form (`spec.template.spec.containers[0].env`, `metadata.labels[app]`) for answers
//! and `syncguard scan`'s line lookup; an RFC 6901 JSON Pointer (`/spec/template/spec/
//! containers/0/env`) for the ignore entries of Argo CD, Flux and Fleet; and the patterns of
//! the `ignorePaths` setting, JSON Pointers whose `*` stands for any one key or index.

use std::fmt::Write as _;
use std::rc::Rc;

/// One step of a path. Names are shared (`Rc<str>`): the walk extends a path at every value
/// it visits, and copying a deep path then costs no allocation per step (owned strings made
/// a 0.5 MB CRD's walk spend most of its time in the allocator).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A field of an object type (`.name`).
    Field(Rc<str>),
    /// An entry of a map, a free-form key (`[key]`).
    Key(Rc<str>),
    /// An item of a list (`[i]`).
    Index(usize),
}

/// A path from the object's root.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Path(pub Vec<Step>);

impl Path {
    /// The path one step further.
    pub fn then(&self, step: Step) -> Path {
        let mut steps = self.0.clone();
        steps.push(step);
        Path(steps)
    }

    /// The path as field-validation warnings write it: fields joined with `.`, map keys and list indexes in
    /// brackets.
    pub fn api(&self) -> String {
        let mut text = String::new();
        for step in &self.0 {
            match step {
                Step::Field(name) => {
                    if !text.is_empty() {
                        text.push('.');
                    }
                    text.push_str(name);
                }
                Step::Key(key) => {
                    let _ = write!(text, "[{key}]");
                }
                Step::Index(i) => {
                    let _ = write!(text, "[{i}]");
                }
            }
        }
        text
    }

    /// The path as an RFC 6901 JSON Pointer (`~` written `~0`, `/` written `~1`).
    pub fn pointer(&self) -> String {
        let mut text = String::new();
        for step in &self.0 {
            text.push('/');
            match step {
                Step::Field(name) | Step::Key(name) => text.push_str(&name.replace('~', "~0").replace('/', "~1")),
                Step::Index(i) => {
                    let _ = write!(text, "{i}");
                }
            }
        }
        text
    }

    /// Whether the path is `pattern` or lies under it. `pattern` is a JSON Pointer whose `*`
    /// steps match any one key or index (see [`Pattern`]).
    pub fn is_under(&self, pattern: &Pattern) -> bool {
        pattern.0.len() <= self.0.len()
            && pattern
                .0
                .iter()
                .zip(&self.0)
                .all(|(want, step)| match (want.as_deref(), step) {
                    (None, _) => true,
                    (Some(want), Step::Field(name) | Step::Key(name)) => want == &**name,
                    (Some(want), Step::Index(i)) => want.parse::<usize>().ok() == Some(*i),
                })
    }
}

/// A path pattern of the `ignorePaths` setting: a JSON Pointer, `*` for any one step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern(pub Vec<Option<String>>);

impl Pattern {
    /// Reads a JSON Pointer pattern (`/spec/replicas`, `/spec/template/spec/containers/*/image`).
    pub fn parse(text: &str) -> Result<Pattern, String> {
        let Some(rest) = text.strip_prefix('/') else {
            return Err(format!(
                "{} is not a JSON Pointer: it must start with `/` (`/spec/replicas`)",
                crate::text::quote(text)
            ));
        };
        let steps = rest
            .split('/')
            .map(|step| match step {
                "*" => None,
                step => Some(step.replace("~1", "/").replace("~0", "~")),
            })
            .collect();
        Ok(Pattern(steps))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path() -> Path {
        Path(vec![
            Step::Field("metadata".into()),
            Step::Field("annotations".into()),
            Step::Key("example.com/a~b".into()),
        ])
    }

    #[test]
    fn paths_in_each_form() {
        assert_eq!(path().api(), "metadata.annotations[example.com/a~b]");
        assert_eq!(path().pointer(), "/metadata/annotations/example.com~1a~0b");
        let item = Path(vec![Step::Field("spec".into())])
            .then(Step::Index(2))
            .then(Step::Field("env".into()));
        assert_eq!(item.api(), "spec[2].env");
        assert_eq!(item.pointer(), "/spec/2/env");
        assert_eq!(Path::default().pointer(), "");
    }

    #[test]
    fn patterns_match_paths_and_what_lies_under_them() {
        let pattern = |text: &str| Pattern::parse(text).unwrap();
        assert!(path().is_under(&pattern("/metadata/annotations/example.com~1a~0b")));
        assert!(path().is_under(&pattern("/metadata/annotations")));
        assert!(path().is_under(&pattern("/metadata/*/example.com~1a~0b")));
        assert!(!path().is_under(&pattern("/metadata/labels")));
        assert!(!path().is_under(&pattern("/metadata/annotations/example.com~1a~0b/x")));
        let item = Path(vec![Step::Field("containers".into()), Step::Index(3)]);
        assert!(item.is_under(&pattern("/containers/3")));
        assert!(item.is_under(&pattern("/containers/*")));
        assert!(!item.is_under(&pattern("/containers/2")));
        assert!(
            Pattern::parse("spec/replicas")
                .unwrap_err()
                .contains("must start with `/`")
        );
    }
}
