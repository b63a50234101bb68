/// Errors of the MLS module: each case says what was wrong with the input or the request.
///
/// Messages name structures, nodes and rules, never secret values. (Byte-level decoding failures
/// are `TLSDecodingError`.)
public enum MLSError: Error, Equatable, Sendable {
    // MARK: Ratchet tree (RFC 9420 §7)

    /// A ratchet tree broke a structural rule of §7 or §12.4.3.1; the text names node and rule.
    case invalidRatchetTree(String)
    /// A tree's hash differs from the one it was announced with (e.g. in GroupInfo).
    case treeHashMismatch
    /// A leaf index lies outside the tree.
    case leafIndexOutOfRange(UInt32)
    /// An operation named a blank leaf where a member was required.
    case blankLeaf(UInt32)
    /// A leaf node's signature does not verify under its own signature key.
    case invalidLeafSignature(leaf: UInt32)
    /// A leaf node breaks a rule of RFC 9420 §7.3 other than its signature; the text says which.
    case invalidLeafNode(leaf: UInt32, String)
    /// An HPKE encryption key appears in more than one node.
    case duplicateEncryptionKey(node: Int)
    /// A signature key appears in more than one leaf.
    case duplicateSignatureKey(leaf: UInt32)

    // MARK: TreeKEM (RFC 9420 §7.4–§7.6)

    /// An UpdatePath does not fit the tree (node count, resolution sizes, leaf source…).
    case invalidUpdatePath(String)
    /// The parent hash computed for an UpdatePath differs from the one its leaf node signs.
    case parentHashMismatch
    /// A public key derived from a decrypted path secret differs from the UpdatePath's.
    case pathKeyMismatch(node: Int)
    /// No ciphertext in the UpdatePath is addressed to a key this member holds.
    case noPathSecretForMember
    /// A path secret failed to decrypt (wrong key or tampered ciphertext).
    case pathSecretDecryptionFailed
    /// The private state does not match the tree (a private key for a blank node or a key
    /// whose public half differs from the tree's).
    case privateStateMismatch(node: Int)

    // MARK: KeyPackages (RFC 9420 §10.1)

    /// A KeyPackage broke a validation rule; the text names the rule (signature, suite,
    /// version, leaf source, keys, capabilities).
    case invalidKeyPackage(String)
    /// A KeyPackage's lifetime does not contain the validation time, or spans more than
    /// `Lifetime.maximumRange`.
    case keyPackageLifetime(notBefore: UInt64, notAfter: UInt64, time: UInt64)
}
