/// An `AuthenticatedContent` whose framing has been checked: it decrypted (PrivateMessage) or
/// carried a valid membership tag (PublicMessage from a member), it belongs to the group and
/// epoch it was unprotected under, its sender may send this content type in this wire format,
/// and its signature verifies under the sender's key.
///
/// Only `MessageSecrets.unprotect` creates one, so code that accepts this type cannot be handed
/// unauthenticated content. What framing cannot check is left to the group: a commit's
/// confirmation tag (it needs the next epoch's confirmation key) and the semantics of proposals
/// and commits.
public struct VerifiedAuthenticatedContent: Hashable, Sendable {
    public let authenticatedContent: AuthenticatedContent
    /// For a PrivateMessage, the sender ratchet generation it used (nil for a PublicMessage).
    public let generation: UInt32?

    init(_ authenticatedContent: AuthenticatedContent, generation: UInt32?) {
        self.authenticatedContent = authenticatedContent
        self.generation = generation
    }

    public var wireFormat: WireFormat { authenticatedContent.wireFormat }
    public var content: FramedContent { authenticatedContent.content }
    public var sender: Sender { authenticatedContent.content.sender }
    public var epoch: UInt64 { authenticatedContent.content.epoch }
    public var body: FramedContentBody { authenticatedContent.content.body }
    public var authenticatedData: [UInt8] { authenticatedContent.content.authenticatedData }
    /// The commit's confirmation tag, still to be checked against the new epoch.
    public var confirmationTag: [UInt8]? { authenticatedContent.auth.confirmationTag }
}
