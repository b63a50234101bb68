/// `PublicMessage` (RFC 9420 §6.2): signed but unencrypted framing. A decoded PublicMessage is
/// unauthenticated until its signature and (for members) membership tag are verified.
public struct PublicMessage: Hashable, Sendable, TLSCodable {
    public var content: FramedContent
    public var auth: FramedContentAuthData
    /// `MAC membership_tag`, present exactly when the sender is a member.
    public var membershipTag: [UInt8]?

    public init(content: FramedContent, auth: FramedContentAuthData, membershipTag: [UInt8]? = nil) {
        self.content = content
        self.auth = auth
        self.membershipTag = membershipTag
    }

    public var authenticatedContent: AuthenticatedContent {
        AuthenticatedContent(wireFormat: .publicMessage, content: content, auth: auth)
    }

    /// The `AuthenticatedContentTBM` bytes the membership tag is a MAC over (RFC 9420 §6.2):
    /// FramedContentTBS followed by the auth data.
    public func toBeMACed(serializedContext: [UInt8]) -> [UInt8] {
        var w = TLSWriter()
        w.writeRaw(content.toBeSigned(wireFormat: .publicMessage, serializedContext: serializedContext))
        auth.encode(to: &w)
        return w.bytes
    }

    public func encode(to writer: inout TLSWriter) {
        content.encode(to: &writer)
        auth.encode(to: &writer)
        if case .member = content.sender, let membershipTag { writer.writeOpaque(membershipTag) }
    }

    public init(from reader: inout TLSReader) throws {
        content = try FramedContent(from: &reader)
        auth = try FramedContentAuthData(from: &reader, contentType: content.contentType)
        if case .member = content.sender {
            membershipTag = try reader.readOpaque()
        } else {
            membershipTag = nil
        }
    }
}
