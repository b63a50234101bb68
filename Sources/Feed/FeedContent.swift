import Crypto

/// A content (feed.md 6): a canonical JSON object whose `type` is the envelope's, checked
/// against its type's table. Unknown types are `opaque` (never refused here).
public enum FeedContent {
    public static let maximumBytes = 16_384
    public static let knownTypes: Set<String> = ["post", "reaction", "profile_update", "contact_introduction", "key_rotation", "tombstone"]

    /// The content as stored: `bytes` are canonical and valid for `type`. `badContent` or
    /// `typeMismatch` otherwise (the type is checked before the type's rules).
    public static func validate(_ bytes: [UInt8], type: String, authorIdentityKey: [UInt8]) throws(FeedError) -> FeedJSON {
        guard bytes.count <= maximumBytes else { throw .badContent }
        let value: FeedJSON
        do { value = try CanonicalJSON.parseCanonical(bytes, mismatch: .badContent) } catch { throw .badContent }
        guard case .object = value, let declared = value["type"]?.string else { throw .badContent }
        guard declared == type else { throw .typeMismatch }
        let rules = Rules(value: value)
        switch type {
        case "post":
            try rules.text("body", 1...2000, required: true)
            try rules.ids("attachments", max: 4)
            try rules.id("reply_to")
            try rules.ids("mentions", max: 32)
        case "reaction":
            try rules.id("target_message", required: true)
            try rules.text("emoji", 1...4, required: true) { $0.value > 0x20 && !(0x7F...0x9F).contains($0.value) }
        case "profile_update":
            try rules.text("display_name", 1...64) { !(0x00...0x1F).contains($0.value) && !(0x7F...0x9F).contains($0.value) }
            try rules.id("avatar_hash")
        case "contact_introduction":
            try rules.id("introduced_feed_id", required: true)
            try rules.bytes("introduced_dh_key", count: 32, required: true)
            try rules.encapsulationKey("introduced_pq_key", required: true)
            try rules.text("note", 1...256)
        case "key_rotation":
            try checkRotation(rules, author: authorIdentityKey)
        case "tombstone":
            try rules.id("target_message", required: true)
            try rules.oneOf("reason", ["retracted", "error", "spam"])
        default:
            break
        }
        return value
    }

    /// A key_rotation's bundle is rebuilt from its members and its signature checked under the
    /// author's `I` (which v1 never changes).
    private static func checkRotation(_ rules: Rules, author: [UInt8]) throws(FeedError) {
        let identity = try rules.bytes("new_identity_key", count: 32, required: true)
        let staticKey = try rules.bytes("new_dh_key", count: 32, required: true)
        let ek = try rules.encapsulationKey("new_pq_key", required: true)
        guard case .integer(let createdAt)? = rules.value["created_at"], createdAt >= 0 else { throw .badContent }
        let signature = try rules.bytes("previous_key_sig", count: 64, required: true)
        try rules.oneOf("reason", ["device_migration", "key_compromise", "scheduled_rotation"])
        guard let identity, let staticKey, let ek, let signature, identity == author else { throw .badContent }
        let message = PQBundle.domain + [PQBundle.version] + identity + staticKey + PQBundle.u64(UInt64(createdAt)) + ek
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: identity),
              key.isValidSignature(signature, for: message) else { throw .badContent }
    }

    /// The members of one content and their rules; an optional member may be absent or null.
    struct Rules {
        let value: FeedJSON

        private func member(_ name: String, required: Bool) throws(FeedError) -> FeedJSON? {
            switch value[name] {
            case nil, .null?:
                if required { throw .badContent }
                return nil
            case let present?: return present
            }
        }

        func text(_ name: String, _ scalars: ClosedRange<Int>, required: Bool = false,
                  allowed: (Unicode.Scalar) -> Bool = { _ in true }) throws(FeedError) {
            guard let present = try member(name, required: required) else { return }
            guard case .string(let s) = present, scalars.contains(s.unicodeScalars.count), s.unicodeScalars.allSatisfy(allowed) else {
                throw .badContent
            }
        }

        @discardableResult
        func id(_ name: String, required: Bool = false) throws(FeedError) -> [UInt8]? {
            try bytes(name, count: 32, required: required)
        }

        @discardableResult
        func bytes(_ name: String, count: Int, required: Bool = false) throws(FeedError) -> [UInt8]? {
            guard let present = try member(name, required: required) else { return nil }
            guard case .string(let s) = present, let decoded = Base64URL.decode(s, count: count) else { throw .badContent }
            return decoded
        }

        func ids(_ name: String, max: Int) throws(FeedError) {
            guard let present = try member(name, required: false) else { return }
            guard case .array(let items) = present, items.count <= max else { throw .badContent }
            for item in items {
                guard case .string(let s) = item, Base64URL.decode(s, count: 32) != nil else { throw .badContent }
            }
        }

        func oneOf(_ name: String, _ allowed: Set<String>) throws(FeedError) {
            guard let present = try member(name, required: false) else { return }
            guard case .string(let s) = present, allowed.contains(s) else { throw .badContent }
        }

        @discardableResult
        func encapsulationKey(_ name: String, required: Bool) throws(FeedError) -> [UInt8]? {
            guard let ek = try bytes(name, count: PQBundle.encapsulationKeyCount, required: required) else { return nil }
            guard PQBundle.isValidEncapsulationKey(ek) else { throw .badContent }
            return ek
        }
    }
}
