// Included by build.rs (which writes the table) and by well_known.rs (which looks it up), so
// both hash alike.

/// The table key of an API group and a kind: FNV-1a (64 bits) of `group/kind`, the kind in
/// lowercase (the catalog the table comes from names kinds in lowercase).
fn well_known_key(group: &str, kind: &str) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = fnv::FnvHasher::default();
    hasher.write(group.as_bytes());
    hasher.write_u8(b'/');
    for byte in kind.bytes() {
        hasher.write_u8(byte.to_ascii_lowercase());
    }
    hasher.finish()
}
