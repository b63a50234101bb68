/// `ProposalOrRef` (RFC 9420 §12.4): a proposal inline in a commit, or a reference to one sent
/// earlier in the epoch.
public enum ProposalOrRef: Hashable, Sendable, TLSCodable {
    case proposal(Proposal)
    /// `ProposalRef`: RefHash("MLS 1.0 Proposal Reference", AuthenticatedContent).
    case reference([UInt8])

    public func encode(to writer: inout TLSWriter) {
        switch self {
        case .proposal(let p):
            writer.writeUInt8(1)
            p.encode(to: &writer)
        case .reference(let ref):
            writer.writeUInt8(2)
            writer.writeOpaque(ref)
        }
    }

    public init(from reader: inout TLSReader) throws {
        switch try reader.readUInt8() {
        case 1: self = .proposal(try Proposal(from: &reader))
        case 2: self = .reference(try reader.readOpaque())
        case let v: throw TLSDecodingError.invalidValue(field: "proposal_or_ref_type", value: UInt64(v))
        }
    }
}

/// `Commit` (RFC 9420 §12.4): the proposals it applies and, when required, an update path.
public struct Commit: Hashable, Sendable, TLSCodable {
    public var proposals: [ProposalOrRef]
    public var path: UpdatePath?

    public init(proposals: [ProposalOrRef], path: UpdatePath? = nil) {
        self.proposals = proposals
        self.path = path
    }

    /// The RefHash label of a `ProposalRef` (RFC 9420 §5.2).
    public static let proposalReferenceLabel = "MLS 1.0 Proposal Reference"

    public func encode(to writer: inout TLSWriter) {
        writer.writeVector(proposals)
        writer.writeOptional(path)
    }

    public init(from reader: inout TLSReader) throws {
        proposals = try reader.readVector()
        path = try reader.readOptional(UpdatePath.self)
    }
}
