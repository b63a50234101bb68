/// Section 2.4: the number two people compare out of band. It covers each side's identity key
/// `I` and Nostr key `N` (not the static key, which rotates), so it authenticates the identity,
/// its npub and, through the bundle check, its handshakes.
public struct SafetyNumber: Sendable, Hashable, CustomStringConvertible {
    public static let iterations = 5200

    /// The 60 digits, the smaller fingerprint first (identical on both sides).
    public let digits: String

    /// For two parties `a` and `b`, in either order.
    public init(_ a: (identity: Ed25519PublicKey, nostrKey: [UInt8]), _ b: (identity: Ed25519PublicKey, nostrKey: [UInt8])) {
        let fa = Self.fingerprint(identity: a.identity, nostrKey: a.nostrKey)
        let fb = Self.fingerprint(identity: b.identity, nostrKey: b.nostrKey)
        digits = fa < fb ? fa + fb : fb + fa
    }

    public init(_ a: ContactCard, _ b: ContactCard) {
        self.init((a.identityKey, a.nostrKey.bytes), (b.identityKey, b.nostrKey.bytes))
    }

    /// One party's 30 digits: d = domain ‖ I ‖ N, then 5200 × d = SHA-512(d ‖ I); six u40 of
    /// d mod 100000, five zero-padded digits each.
    public static func fingerprint(identity: Ed25519PublicKey, nostrKey: [UInt8]) -> String {
        var d = Domain.safetyNumber + identity.bytes + nostrKey
        for _ in 0..<iterations { d = Primitives.sha512(d + identity.bytes) }
        var out = ""
        for j in 0..<6 {
            let chunk = d[(5 * j)..<(5 * j + 5)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } % 100_000
            let text = String(chunk)
            out += String(repeating: "0", count: 5 - text.count) + text
        }
        return out
    }

    /// 12 groups of 5 digits separated by spaces.
    public var grouped: String {
        var groups: [String] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let end = digits.index(index, offsetBy: 5, limitedBy: digits.endIndex) ?? digits.endIndex
            groups.append(String(digits[index..<end]))
            index = end
        }
        return groups.joined(separator: " ")
    }

    /// True when `typed` (spaces ignored) is this number; compared in constant time.
    public func matches(_ typed: String) -> Bool {
        constantTimeEqual(Array(typed.filter { $0 != " " }.utf8), Array(digits.utf8))
    }

    public var description: String { grouped }
}
