/// `Proposal` (RFC 9420 §12.1, plus SelfRemove from draft-ietf-mls-extensions).
///
/// Proposal types without a defined body (custom and GREASE types) are read like OpenMLS 0.8.1
/// reads them: one `opaque payload<V>`, kept verbatim.
public enum Proposal: Hashable, Sendable, TLSCodable {
    case add(AddProposal)
    case update(UpdateProposal)
    case remove(RemoveProposal)
    case preSharedKey(PreSharedKeyProposal)
    case reInit(ReInitProposal)
    case externalInit(ExternalInitProposal)
    case groupContextExtensions(GroupContextExtensionsProposal)
    /// SelfRemove (0x000a): the sender asks to be removed; the body is empty.
    case selfRemove
    /// Any other type; must not be used for the types above (the decoder never does).
    case custom(ProposalType, payload: [UInt8])

    public var proposalType: ProposalType {
        switch self {
        case .add: return .add
        case .update: return .update
        case .remove: return .remove
        case .preSharedKey: return .preSharedKey
        case .reInit: return .reInit
        case .externalInit: return .externalInit
        case .groupContextExtensions: return .groupContextExtensions
        case .selfRemove: return .selfRemove
        case .custom(let type, _): return type
        }
    }

    public func encode(to writer: inout TLSWriter) {
        proposalType.encode(to: &writer)
        switch self {
        case .add(let p): p.encode(to: &writer)
        case .update(let p): p.encode(to: &writer)
        case .remove(let p): p.encode(to: &writer)
        case .preSharedKey(let p): p.encode(to: &writer)
        case .reInit(let p): p.encode(to: &writer)
        case .externalInit(let p): p.encode(to: &writer)
        case .groupContextExtensions(let p): p.encode(to: &writer)
        case .selfRemove: break
        case .custom(_, let payload): writer.writeOpaque(payload)
        }
    }

    public init(from reader: inout TLSReader) throws {
        let type = try ProposalType(from: &reader)
        switch type {
        case .add: self = .add(try AddProposal(from: &reader))
        case .update: self = .update(try UpdateProposal(from: &reader))
        case .remove: self = .remove(try RemoveProposal(from: &reader))
        case .preSharedKey: self = .preSharedKey(try PreSharedKeyProposal(from: &reader))
        case .reInit: self = .reInit(try ReInitProposal(from: &reader))
        case .externalInit: self = .externalInit(try ExternalInitProposal(from: &reader))
        case .groupContextExtensions: self = .groupContextExtensions(try GroupContextExtensionsProposal(from: &reader))
        case .selfRemove: self = .selfRemove
        default: self = .custom(type, payload: try reader.readOpaque())
        }
    }
}

/// `Add`: adds the member described by a KeyPackage.
public struct AddProposal: Hashable, Sendable, TLSCodable {
    public var keyPackage: KeyPackage

    public init(keyPackage: KeyPackage) { self.keyPackage = keyPackage }

    public func encode(to writer: inout TLSWriter) { keyPackage.encode(to: &writer) }

    public init(from reader: inout TLSReader) throws { keyPackage = try KeyPackage(from: &reader) }
}

/// `Update`: replaces the sender's own leaf.
public struct UpdateProposal: Hashable, Sendable, TLSCodable {
    public var leafNode: LeafNode

    public init(leafNode: LeafNode) { self.leafNode = leafNode }

    public func encode(to writer: inout TLSWriter) { leafNode.encode(to: &writer) }

    public init(from reader: inout TLSReader) throws { leafNode = try LeafNode(from: &reader) }
}

/// `Remove`: removes the member at a leaf index.
public struct RemoveProposal: Hashable, Sendable, TLSCodable {
    public var removed: UInt32

    public init(removed: UInt32) { self.removed = removed }

    public func encode(to writer: inout TLSWriter) { writer.writeUInt32(removed) }

    public init(from reader: inout TLSReader) throws { removed = try reader.readUInt32() }
}

/// `PreSharedKey`: injects a PSK into the next epoch's key schedule.
public struct PreSharedKeyProposal: Hashable, Sendable, TLSCodable {
    public var psk: PreSharedKeyID

    public init(psk: PreSharedKeyID) { self.psk = psk }

    public func encode(to writer: inout TLSWriter) { psk.encode(to: &writer) }

    public init(from reader: inout TLSReader) throws { psk = try PreSharedKeyID(from: &reader) }
}

/// `ReInit`: ends the group so it can restart with new parameters.
public struct ReInitProposal: Hashable, Sendable, TLSCodable {
    public var groupID: [UInt8]
    public var version: ProtocolVersion
    public var cipherSuite: CipherSuite
    public var extensions: Extensions

    public init(groupID: [UInt8], version: ProtocolVersion, cipherSuite: CipherSuite, extensions: Extensions) {
        self.groupID = groupID
        self.version = version
        self.cipherSuite = cipherSuite
        self.extensions = extensions
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(groupID)
        version.encode(to: &writer)
        cipherSuite.encode(to: &writer)
        extensions.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        groupID = try reader.readOpaque()
        version = try ProtocolVersion(from: &reader)
        cipherSuite = try CipherSuite(from: &reader)
        extensions = try Extensions(from: &reader)
    }
}

/// `ExternalInit`: the KEM output from which an external joiner's init secret derives.
public struct ExternalInitProposal: Hashable, Sendable, TLSCodable {
    public var kemOutput: [UInt8]

    public init(kemOutput: [UInt8]) { self.kemOutput = kemOutput }

    public func encode(to writer: inout TLSWriter) { writer.writeOpaque(kemOutput) }

    public init(from reader: inout TLSReader) throws { kemOutput = try reader.readOpaque() }
}

/// `GroupContextExtensions`: the complete new list of GroupContext extensions.
public struct GroupContextExtensionsProposal: Hashable, Sendable, TLSCodable {
    public var extensions: Extensions

    public init(extensions: Extensions) { self.extensions = extensions }

    public func encode(to writer: inout TLSWriter) { extensions.encode(to: &writer) }

    public init(from reader: inout TLSReader) throws { extensions = try Extensions(from: &reader) }
}
