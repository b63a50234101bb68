/// A proposal received (or sent) in the current epoch, under its `ProposalRef` (RFC 9420 §5.2,
/// §12.4): commits of this epoch may include it by reference.
public struct StoredProposal: Hashable, Sendable {
    /// `MakeProposalRef` of the AuthenticatedContent that carried it.
    public let reference: [UInt8]
    public let proposal: Proposal
    /// The member that proposed it.
    public let sender: LeafIndex

    public init(reference: [UInt8], proposal: Proposal, sender: LeafIndex) {
        self.reference = reference
        self.proposal = proposal
        self.sender = sender
    }
}

/// The proposals of one epoch, in arrival order (OpenMLS `ProposalStore`). Emptied when the
/// epoch ends: a proposal never outlives the epoch it was sent in (RFC 9420 §12.4).
struct ProposalStore: Sendable, Equatable {
    private(set) var entries: [StoredProposal] = []

    init() {}

    init(entries: [StoredProposal]) { self.entries = entries }

    func proposal(for reference: [UInt8]) -> StoredProposal? { entries.first { $0.reference == reference } }

    /// Adds `proposal` unless one with the same reference is stored (a duplicate delivery).
    mutating func insert(_ proposal: StoredProposal) {
        guard self.proposal(for: proposal.reference) == nil else { return }
        entries.append(proposal)
    }

    mutating func remove(reference: [UInt8]) {
        entries.removeAll { $0.reference == reference }
    }

    var isEmpty: Bool { entries.isEmpty }
}

extension StoredProposal: TLSCodable {
    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(reference)
        proposal.encode(to: &writer)
        writer.writeUInt32(sender.value)
    }

    public init(from reader: inout TLSReader) throws {
        reference = try reader.readOpaque()
        proposal = try Proposal(from: &reader)
        sender = LeafIndex(try reader.readUInt32())
    }
}

/// A proposal as a commit applies it: the proposal, who proposed it (the committer for inline
/// proposals) and its reference when it came by reference.
struct ResolvedProposal: Sendable {
    let proposal: Proposal
    let sender: LeafIndex
    let reference: [UInt8]?
}

/// A proposal a commit applied, as reported to the application (Marmot's commit
/// authorization looks at who proposed what).
public struct CommittedProposal: Hashable, Sendable {
    public let proposal: Proposal
    /// Who proposed it, as the member was before the commit.
    public let sender: Member
    /// True when the commit named it by reference (it was sent earlier in the epoch).
    public let byReference: Bool

    public init(proposal: Proposal, sender: Member, byReference: Bool) {
        self.proposal = proposal
        self.sender = sender
        self.byReference = byReference
    }
}
