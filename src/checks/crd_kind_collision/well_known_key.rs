// Included by build/well_known.rs (which writes the table) and by well_known.rs (which looks it up), so
// both hash alike.

/// The table key of an API group: FNV-1a (64 bits) of its name.
fn well_known_key(group: &str) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(group.as_bytes());
    hasher.finish()
}
