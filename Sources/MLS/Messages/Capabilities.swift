/// `Capabilities` (RFC 9420 §7.2): what a client supports, as signed into its leaf node.
///
/// Lists are kept exactly as received, GREASE and unknown values included, because the leaf
/// signature covers them; the `supports…` helpers add the RFC's implicit defaults.
public struct Capabilities: Hashable, Sendable, TLSCodable {
    public var versions: [ProtocolVersion]
    public var cipherSuites: [CipherSuite]
    public var extensions: [ExtensionType]
    public var proposals: [ProposalType]
    public var credentials: [CredentialType]

    public init(
        versions: [ProtocolVersion] = [.mls10],
        cipherSuites: [CipherSuite] = [.mls128DHKEMX25519AES128GCMSHA256Ed25519],
        extensions: [ExtensionType] = [],
        proposals: [ProposalType] = [],
        credentials: [CredentialType] = [.basic]
    ) {
        self.versions = versions
        self.cipherSuites = cipherSuites
        self.extensions = extensions
        self.proposals = proposals
        self.credentials = credentials
    }

    /// Extension types 1–5 are supported by every client without being listed (§7.2).
    public func supportsExtension(_ type: ExtensionType) -> Bool {
        type.isDefault || extensions.contains(type)
    }

    /// Proposal types 1–7 are supported by every client without being listed (§7.2).
    public func supportsProposal(_ type: ProposalType) -> Bool {
        type.isDefault || proposals.contains(type)
    }

    public func supportsCredential(_ type: CredentialType) -> Bool { credentials.contains(type) }

    /// Whether these capabilities meet a group's `required_capabilities` (§11.1).
    public func satisfies(_ required: RequiredCapabilities) -> Bool {
        required.extensionTypes.allSatisfy(supportsExtension)
            && required.proposalTypes.allSatisfy(supportsProposal)
            && required.credentialTypes.allSatisfy(supportsCredential)
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeVector(versions)
        writer.writeVector(cipherSuites)
        writer.writeVector(extensions)
        writer.writeVector(proposals)
        writer.writeVector(credentials)
    }

    public init(from reader: inout TLSReader) throws {
        versions = try reader.readVector()
        cipherSuites = try reader.readVector()
        extensions = try reader.readVector()
        proposals = try reader.readVector()
        credentials = try reader.readVector()
    }
}
