import MLS
import Nostr

/// The content and tags of a KeyPackage event (MIP-00), exactly as MDK 0.8.0's
/// `create_key_package_for_event` makes them: content = standard base64 of the raw TLS
/// `KeyPackage` (not an MLSMessage), tags for kind 30443 in MDK's order
/// `d, mls_protocol_version, mls_ciphersuite, mls_extensions, mls_proposals, relays, i,
/// [-], client, encoding`, and the kind-443 twin's tags (the same without `d`).
public struct KeyPackageEventContent: Sendable {
    public let keyPackage: KeyPackage
    public let content: String
    /// Tags of the kind-30443 event.
    public let tags: [[String]]
    /// Tags of the legacy kind-443 twin.
    public let legacyTags: [[String]]
    /// The KeyPackageRef, also the `i` tag.
    public let reference: [UInt8]
    /// The `d` tag: 64 lowercase hex characters naming the addressable slot. Reuse it when
    /// rotating so relays replace the old package.
    public let slot: String

    /// - Parameters:
    ///   - relays: where the package will be published (the `relays` tag); at least one.
    ///   - slot: the `d` value to reuse (64 hex characters).
    ///   - protected: add NIP-70's `["-"]` (many public relays then refuse the event).
    ///   - client: the `client` tag value, or nil to omit the tag.
    public init(keyPackage: KeyPackage, relays: [RelayURL], slot: String, protected: Bool = false,
                client: String? = MarmotTag.defaultClient) throws {
        guard !relays.isEmpty else { throw MarmotError.invalidTag("relays", reason: "at least one relay is required") }
        guard slot.utf8.count == 64, TagRules.isHex(slot) else {
            throw MarmotError.invalidTag("d", reason: "must be 64 hex characters")
        }
        self.keyPackage = keyPackage
        self.content = StrictBase64.encode(keyPackage.tlsSerialized)
        self.reference = keyPackage.reference(suite: .mls128DHKEMX25519AES128GCMSHA256Ed25519)
        self.slot = slot
        var legacy: [[String]] = [
            ["mls_protocol_version", KeyPackageEvent.protocolVersion],
            ["mls_ciphersuite", TagRules.codePoint(CipherSuite.mls128DHKEMX25519AES128GCMSHA256Ed25519.rawValue)],
            ["mls_extensions"] + KeyPackageEvent.extensions.map { TagRules.codePoint($0.rawValue) },
            ["mls_proposals"] + KeyPackageEvent.proposals.map { TagRules.codePoint($0.rawValue) },
            ["relays"] + relays.map(\.string),
            ["i", Hex.encode(reference)],
        ]
        if protected { legacy.append(["-"]) }
        if let client { legacy.append(["client", client]) }
        legacy.append(["encoding", MarmotTag.base64])
        self.legacyTags = legacy
        self.tags = [["d", slot]] + legacy
    }

    /// As above with a fresh random slot (32 bytes from `rng`).
    public init<R: RandomNumberGenerator>(keyPackage: KeyPackage, relays: [RelayURL], protected: Bool = false,
                                          client: String? = MarmotTag.defaultClient, using rng: inout R) throws {
        try self.init(keyPackage: keyPackage, relays: relays, slot: Hex.encode(rng.randomBytes(32)),
                      protected: protected, client: client)
    }

    /// Signs the kind-30443 event and its kind-443 twin with the identity key the package's
    /// BasicCredential names.
    public func sign<R: RandomNumberGenerator>(keys: Keys, createdAt: Int64, rng: inout R) throws -> (event: Event, legacyEvent: Event) {
        guard keyPackage.leafNode.credential.basicIdentity == keys.publicKey.bytes else {
            throw MarmotError.keyPackageIdentityMismatch
        }
        let event = try Event.sign(kind: MarmotKind.keyPackage, content: content, tags: tags, createdAt: createdAt,
                                   keys: keys, rng: &rng)
        let legacy = try Event.sign(kind: MarmotKind.legacyKeyPackage, content: content, tags: legacyTags,
                                    createdAt: createdAt, keys: keys, rng: &rng)
        return (event, legacy)
    }
}

/// A KeyPackage event that passed every check MDK 0.8.0's `parse_key_package` makes: the only
/// form from which a member may be added.
public struct VerifiedKeyPackageEvent: Hashable, Sendable {
    public let event: Event
    public let keyPackage: VerifiedKeyPackage
    /// The relays of the `relays` tag, in tag order.
    public let relays: [RelayURL]
    /// The `d` tag of a kind-30443 event; nil for kind 443.
    public let slot: String?

    /// The KeyPackageRef (equal to the `i` tag when there is one).
    public var reference: [UInt8] { keyPackage.reference }
    /// The Nostr identity the package belongs to (event author = credential identity).
    public var identity: PublicKey { event.pubkey }
    public var isLegacyKind: Bool { event.kind == MarmotKind.legacyKeyPackage }
    /// Whether the leaf advertises SelfRemove (MDK's "lowest common denominator" rule for a
    /// group's required proposals looks at this for every invitee).
    public var supportsSelfRemove: Bool { keyPackage.keyPackage.leafNode.capabilities.proposals.contains(.selfRemove) }
    /// Last-resort packages may be consumed by several Welcomes.
    public var isLastResort: Bool { keyPackage.keyPackage.extensions.isLastResort }
}

/// MIP-00 KeyPackage event rules.
public enum KeyPackageEvent {
    public static let protocolVersion = "1.0"
    /// Non-default extensions every Marmot leaf supports: last_resort and NostrGroupData.
    public static let extensions: [ExtensionType] = [.lastResort, NostrGroupData.extensionType]
    /// SelfRemove.
    public static let proposals: [ProposalType] = [.selfRemove]

    /// Verifies a (signature-checked) KeyPackage event of kind 30443 or 443 with MDK 0.8.0's
    /// rules, in MDK's order: kind; for 30443 a `d` tag of 64 hex characters; the tag set
    /// (`validate_key_package_tags`); an `encoding` tag saying base64; the content as a
    /// KeyPackage valid at `now` (RFC 9420 §10.1); a 32-byte BasicCredential identity equal to
    /// the author; and the `i` tag equal to the computed KeyPackageRef.
    ///
    /// One deliberate difference: MDK ignores bytes after the KeyPackage in the content; they
    /// are rejected here.
    public static func verify(_ event: Event, now: Int64) throws -> VerifiedKeyPackageEvent {
        let checked = try check(kind: event.kind, author: event.pubkey, tags: event.tags, content: event.content, now: now)
        return VerifiedKeyPackageEvent(event: event, keyPackage: checked.keyPackage, relays: checked.relays, slot: checked.slot)
    }

    /// The rules of `verify` on an event's fields (the signature is the caller's concern).
    static func check(kind: Int, author: PublicKey, tags: [[String]], content: String, now: Int64) throws
        -> (keyPackage: VerifiedKeyPackage, relays: [RelayURL], slot: String?) {
        let kinds = [MarmotKind.keyPackage, MarmotKind.legacyKeyPackage]
        guard kinds.contains(kind) else { throw MarmotError.wrongKind(expected: kinds, actual: kind) }
        let addressable = kind == MarmotKind.keyPackage

        var slot: String?
        if addressable {
            guard let d = TagRules.first(tags, "d") else { throw MarmotError.missingTag("d") }
            let value = TagRules.content(d) ?? ""
            guard !value.isEmpty else { throw MarmotError.invalidTag("d", reason: "empty") }
            guard value.utf8.count == 64 else { throw MarmotError.invalidTag("d", reason: "not 64 hex characters") }
            guard TagRules.isHex(value) else { throw MarmotError.invalidTag("d", reason: "not hex") }
            slot = value
        }

        let relays = try validateTags(tags, addressable: addressable)

        guard tags.contains(where: { $0.count >= 2 && $0[0] == "encoding" && TagRules.lowercased($0[1]) == MarmotTag.base64 })
        else { throw MarmotError.missingTag("encoding") }

        let bytes = try StrictBase64.decode(content, field: "content")
        let keyPackage: KeyPackage
        do {
            keyPackage = try KeyPackage(tlsSerialized: bytes)
        } catch let error as TLSDecodingError {
            throw MarmotError.keyPackageDecoding(error)
        }
        let verified: VerifiedKeyPackage
        do {
            verified = try keyPackage.validate(at: UInt64(max(0, now)))
        } catch let error as MLSError {
            throw MarmotError.keyPackageInvalid(error)
        }

        guard let identity = keyPackage.leafNode.credential.basicIdentity else { throw MarmotError.keyPackageCredentialNotBasic }
        guard identity.count == 32 else { throw MarmotError.keyPackageIdentityLength(identity.count) }
        guard identity == author.bytes else { throw MarmotError.keyPackageIdentityMismatch }

        if let i = TagRules.first(tags, "i") {
            // Format checked in validateTags: exactly one non-empty hex value.
            guard let claimed = try? Hex.decode(i[1]), claimed == verified.reference else {
                throw MarmotError.keyPackageReferenceMismatch
            }
        }
        return (verified, relays, slot)
    }

    /// MDK's `validate_key_package_tags` without the content: presence first (in MDK's order),
    /// then each value. Returns the relays.
    static func validateTags(_ tags: [[String]], addressable: Bool) throws -> [RelayURL] {
        func require(_ name: String) throws -> [String] {
            guard let tag = TagRules.first(tags, name) else { throw MarmotError.missingTag(name) }
            return tag
        }
        let version = try require("mls_protocol_version")
        let suite = try require("mls_ciphersuite")
        let extensions = try require("mls_extensions")

        let proposals = TagRules.first(tags, "mls_proposals")
        if addressable, proposals == nil { throw MarmotError.missingTag("mls_proposals") }
        if let proposals, proposals != ["mls_proposals", TagRules.codePoint(ProposalType.selfRemove.rawValue)] {
            throw MarmotError.invalidTag("mls_proposals", reason: "must be exactly [\"mls_proposals\",\"0x000a\"]")
        }

        let relaysTag = try require("relays")
        let reference = TagRules.first(tags, "i")
        if addressable, reference == nil { throw MarmotError.missingTag("i") }

        guard let versionValue = TagRules.content(version) else {
            throw MarmotError.invalidTag("mls_protocol_version", reason: "no value")
        }
        guard versionValue == protocolVersion else {
            throw MarmotError.invalidTag("mls_protocol_version", reason: "unsupported version")
        }

        guard let suiteValue = TagRules.content(suite) else { throw MarmotError.invalidTag("mls_ciphersuite", reason: "no value") }
        guard TagRules.isCodePoint(suiteValue) else {
            throw MarmotError.invalidTag("mls_ciphersuite", reason: "not 0x followed by 4 hex digits")
        }
        guard TagRules.lowercased(suiteValue) == TagRules.codePoint(CipherSuite.mls128DHKEMX25519AES128GCMSHA256Ed25519.rawValue) else {
            throw MarmotError.invalidTag("mls_ciphersuite", reason: "unsupported cipher suite")
        }

        let extensionValues = extensions.dropFirst()
        guard !extensionValues.isEmpty else { throw MarmotError.invalidTag("mls_extensions", reason: "no value") }
        for value in extensionValues where !TagRules.isCodePoint(value) {
            throw MarmotError.invalidTag("mls_extensions", reason: "a value is not 0x followed by 4 hex digits")
        }
        let advertised = Set(extensionValues.map(TagRules.lowercased))
        for required in Self.extensions where !advertised.contains(TagRules.codePoint(required.rawValue)) {
            throw MarmotError.invalidTag("mls_extensions", reason: "missing required extension \(TagRules.codePoint(required.rawValue))")
        }

        guard relaysTag.count > 1 else { throw MarmotError.invalidTag("relays", reason: "no relay URL") }
        let relays = try relaysTag.dropFirst().map { try RelayURL.marmot($0) }

        if let reference {
            guard reference.count == 2 else { throw MarmotError.invalidTag("i", reason: "must hold exactly one value") }
            guard !reference[1].isEmpty else { throw MarmotError.invalidTag("i", reason: "empty") }
            guard TagRules.isHex(reference[1]) else { throw MarmotError.invalidTag("i", reason: "not hex") }
        }
        return relays
    }
}
