//! The 16-bit hash of a member name that [`super::ApiType::field`] scans for, shared with the
//! build script that writes each member's hash into the table (`build/api_fields.rs`), so the
//! two cannot disagree.

/// FNV-1a over the name's bytes, folded to 16 bits.
pub const fn name_hash(name: &[u8]) -> u16 {
    let mut hash: u32 = 0x811c_9dc5;
    let mut i = 0;
    while i < name.len() {
        hash = (hash ^ name[i] as u32).wrapping_mul(0x0100_0193);
        i += 1;
    }
    (hash ^ hash >> 16) as u16
}
