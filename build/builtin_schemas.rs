//! `$OUT_DIR/builtin_schemas.rs`, the index of object-validation's table of the built-in kinds'
//! schemas (`builtin_schemas.tsv`, written by `tools/derive-builtin-schemas.py`): where each row
//! starts, so that a lookup is a binary search over offsets that reads only the keys it compares,
//! and the first and last minor the table holds.

use std::fmt::Write as _;
use std::path::Path;

/// Generates `$OUT_DIR/builtin_schemas.rs` from the table, which it holds to its order (rows
/// sorted by key bytes, then by minors, the ranges of a key apart).
pub fn builtin_schemas(out: &Path) {
    const TABLE: &str = "src/checks/object_validation/builtin_schemas.tsv";
    println!("cargo::rerun-if-changed={TABLE}");
    let text = std::fs::read_to_string(TABLE).expect("read builtin_schemas.tsv");
    let body = text.find("\n\n").expect("the header ends with a blank line") + 2;
    let minors = text
        .lines()
        .find_map(|line| line.strip_prefix("# minors: "))
        .expect("the header names the minors");
    let (first, last) = minors.split_once(' ').expect("# minors: FIRST LAST");
    let (first, last): (u32, u32) = (first.parse().expect("a minor"), last.parse().expect("a minor"));
    let mut starts = Vec::new();
    let mut previous: Option<(&str, u32)> = None;
    let mut start = body;
    for line in text[body..].split_terminator('\n') {
        let mut fields = line.splitn(4, '\t');
        let key = fields.next().expect("a key");
        let from: u32 = fields.next().and_then(|f| f.parse().ok()).expect("a first minor");
        let to: u32 = fields.next().and_then(|f| f.parse().ok()).expect("a last minor");
        assert!(fields.next().is_some(), "{key}: no value");
        assert!(
            first <= from && from <= to && to <= last,
            "{key}: minors {from} to {to}"
        );
        if let Some((previous_key, previous_to)) = previous {
            assert!(
                previous_key < key || (previous_key == key && previous_to < from),
                "{key}: out of order"
            );
        }
        previous = Some((key, to));
        starts.push(u32::try_from(start).expect("the table is under 4 GiB"));
        start += line.len() + 1;
    }
    let mut code = String::new();
    writeln!(code, "/// The first minor the table holds documents of.").unwrap();
    writeln!(code, "const FIRST_MINOR: u32 = {first};").unwrap();
    writeln!(code, "/// The last minor the table holds documents of.").unwrap();
    writeln!(code, "const LAST_MINOR: u32 = {last};").unwrap();
    writeln!(
        code,
        "/// Where each row of the table starts (a byte offset), in the table's order."
    )
    .unwrap();
    writeln!(code, "static ROW_STARTS: &[u32] = &{starts:?};").unwrap();
    std::fs::write(out.join("builtin_schemas.rs"), code).expect("write builtin_schemas.rs");
}
