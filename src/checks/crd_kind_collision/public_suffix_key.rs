// Included by build/public_suffix.rs (which writes the table) and by public_suffix.rs (which looks
// it up), so both hash alike.

/// The key of the Public Suffix List's root: FNV-1a's offset basis (no label read yet).
const SUFFIX_ROOT: u64 = 0xcbf2_9ce4_8422_2325;

/// The key of the child `label` of the node `parent` of the list's rules (labels read from the
/// top-level domain inwards): FNV-1a (64 bits) carried on over the label and a dot, so that a
/// node's key is FNV-1a of its labels, right to left, each followed by a dot. The two low bits
/// of a table entry hold the node's [leaf kind](SUFFIX_LEAF), so keys are compared without them.
fn suffix_node_key(parent: u64, label: &[u8]) -> u64 {
    use std::hash::Hasher as _;
    let mut hasher = fnv::FnvHasher::with_key(parent);
    hasher.write(label);
    hasher.write(b".");
    hasher.finish()
}

/// The two low bits of a table entry: the node ends no rule (only longer rules pass through it),
/// ends a rule, or ends an exception rule (`!www.ck`).
const SUFFIX_LEAF: [u64; 3] = [0, 1, 2];
