//! The operation of an AdmissionRequest, as the API server writes it (`CREATE`, `UPDATE`,
//! `DELETE`, `CONNECT`), for host code that builds requests or checks the operations of
//! metadata rules.

use serde::{Deserialize, Serialize};

/// An admission operation; serialised as the API server writes it (`"CREATE"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Operation {
    /// `CREATE`.
    Create,
    /// `UPDATE`.
    Update,
    /// `DELETE`.
    Delete,
    /// `CONNECT`.
    Connect,
}

impl Operation {
    /// Every operation, in the order Kubernetes documents them.
    pub const ALL: [Operation; 4] = [
        Operation::Create,
        Operation::Update,
        Operation::Delete,
        Operation::Connect,
    ];

    /// The name as the API server writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

impl std::fmt::Display for Operation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A name that is not one of the API server's operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownOperation(pub String);

impl std::fmt::Display for UnknownOperation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}` is not an admission operation", self.0)
    }
}

impl std::error::Error for UnknownOperation {}

impl std::str::FromStr for Operation {
    type Err = UnknownOperation;

    /// Reads a name as the API server writes it (upper case only, as it compares them).
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Operation::ALL
            .into_iter()
            .find(|op| op.as_str() == name)
            .ok_or_else(|| UnknownOperation(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_and_read_as_the_api_server_does() {
        for op in Operation::ALL {
            let json = serde_json::to_value(op).unwrap();
            assert_eq!(json, op.as_str());
            assert_eq!(serde_json::from_value::<Operation>(json).unwrap(), op);
            assert_eq!(op.as_str().parse::<Operation>(), Ok(op));
            assert_eq!(op.to_string(), op.as_str());
        }
        assert_eq!(
            serde_json::to_string(&Operation::ALL).unwrap(),
            r#"["CREATE","UPDATE","DELETE","CONNECT"]"#
        );
        assert!("create".parse::<Operation>().is_err());
        assert!("*".parse::<Operation>().is_err());
        assert!(serde_json::from_str::<Operation>("\"Create\"").is_err());
    }
}
