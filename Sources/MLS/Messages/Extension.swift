/// `Extension` (RFC 9420 §13): an extension type and its `extension_data`.
///
/// Known types are parsed when decoded, so a malformed known extension is rejected at the
/// boundary; unknown types (Marmot's 0xF2EE, GREASE, anything newer) are carried opaquely and
/// re-encoded verbatim. `ratchet_tree` keeps its bytes raw: the ratchet tree module decodes them.
public enum Extension: Hashable, Sendable, TLSCodable {
    /// `opaque application_id<V>` (leaf nodes).
    case applicationID([UInt8])
    /// The `extension_data` of a `ratchet_tree` extension (`optional<Node> ratchet_tree<V>`),
    /// unparsed; decode it with the ratchet tree's own codec.
    case ratchetTree([UInt8])
    case requiredCapabilities(RequiredCapabilities)
    /// `HPKEPublicKey external_pub` (GroupInfo, for external commits).
    case externalPub([UInt8])
    case externalSenders([ExternalSender])
    /// KeyPackage marker with an empty body (draft-ietf-mls-extensions `last_resort`).
    case lastResort
    /// Any other type. Must not be used for the known types above (the decoder never does).
    case unknown(ExtensionType, [UInt8])

    public var extensionType: ExtensionType {
        switch self {
        case .applicationID: return .applicationID
        case .ratchetTree: return .ratchetTree
        case .requiredCapabilities: return .requiredCapabilities
        case .externalPub: return .externalPub
        case .externalSenders: return .externalSenders
        case .lastResort: return .lastResort
        case .unknown(let type, _): return type
        }
    }

    /// The encoded `extension_data` (without its length prefix).
    public var extensionData: [UInt8] {
        var w = TLSWriter()
        switch self {
        case .applicationID(let id): w.writeOpaque(id)
        case .ratchetTree(let raw): w.writeRaw(raw)
        case .requiredCapabilities(let rc): rc.encode(to: &w)
        case .externalPub(let key): w.writeOpaque(key)
        case .externalSenders(let senders): w.writeVector(senders)
        case .lastResort: break
        case .unknown(_, let data): w.writeRaw(data)
        }
        return w.bytes
    }

    /// Builds an extension from its type and data, parsing the data of known types strictly.
    public init(type: ExtensionType, data: [UInt8]) throws {
        switch type {
        case .applicationID:
            var r = TLSReader(data)
            let id = try r.readOpaque()
            try r.finish()
            self = .applicationID(id)
        case .ratchetTree:
            self = .ratchetTree(data)
        case .requiredCapabilities:
            self = .requiredCapabilities(try RequiredCapabilities(tlsSerialized: data))
        case .externalPub:
            var r = TLSReader(data)
            let key = try r.readOpaque()
            try r.finish()
            self = .externalPub(key)
        case .externalSenders:
            var r = TLSReader(data)
            let senders = try r.readVector(of: ExternalSender.self)
            try r.finish()
            self = .externalSenders(senders)
        case .lastResort:
            guard data.isEmpty else { throw TLSDecodingError.malformed("last_resort extension with a non-empty body") }
            self = .lastResort
        default:
            self = .unknown(type, data)
        }
    }

    public func encode(to writer: inout TLSWriter) {
        extensionType.encode(to: &writer)
        writer.writeOpaque(extensionData)
    }

    public init(from reader: inout TLSReader) throws {
        let type = try ExtensionType(from: &reader)
        let data = try reader.readOpaque()
        try self.init(type: type, data: data)
    }
}

/// `RequiredCapabilities` (RFC 9420 §11.1): what every member of the group must support.
public struct RequiredCapabilities: Hashable, Sendable, TLSCodable {
    public var extensionTypes: [ExtensionType]
    public var proposalTypes: [ProposalType]
    public var credentialTypes: [CredentialType]

    public init(extensionTypes: [ExtensionType] = [], proposalTypes: [ProposalType] = [], credentialTypes: [CredentialType] = []) {
        self.extensionTypes = extensionTypes
        self.proposalTypes = proposalTypes
        self.credentialTypes = credentialTypes
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeVector(extensionTypes)
        writer.writeVector(proposalTypes)
        writer.writeVector(credentialTypes)
    }

    public init(from reader: inout TLSReader) throws {
        extensionTypes = try reader.readVector()
        proposalTypes = try reader.readVector()
        credentialTypes = try reader.readVector()
    }
}

/// `ExternalSender` (RFC 9420 §12.1.8.1): a party allowed to send external proposals.
public struct ExternalSender: Hashable, Sendable, TLSCodable {
    public var signatureKey: [UInt8]
    public var credential: Credential

    public init(signatureKey: [UInt8], credential: Credential) {
        self.signatureKey = signatureKey
        self.credential = credential
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(signatureKey)
        credential.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        signatureKey = try reader.readOpaque()
        credential = try Credential(from: &reader)
    }
}
