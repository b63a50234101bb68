// Section numbers in this module's comments are those of Docs/protocols/pigeon-dm.md.

/// The domain strings of section 1: `burrow-pigeon-v1:` and a purpose; no two uses share one.
enum Domain {
    static let prefix = "burrow-pigeon-v1:"
    static let bundle = bytes("bundle")
    static let nostrLink = bytes("nostr-link")
    static let card = bytes("card")
    static let safetyNumber = bytes("safety-number")
    static let prologue = bytes("prologue")
    static let sessionID = bytes("session-id")
    static let ratchetRoot = bytes("ratchet-root")
    static let rootChain = bytes("root-chain")
    static let messageKey = bytes("message-key")

    private static func bytes(_ purpose: String) -> [UInt8] { Array((prefix + purpose).utf8) }
}

/// Profile version 1: the frame version byte, the card version and the prologue's last byte.
enum ProfileVersion {
    static let v1: UInt8 = 1
}
