/// Nostr kinds of the Marmot v1 profile (MIP-00..03 as MDK 0.8.0 uses them) and the inner
/// kinds Burrow reads and writes inside group messages (White Noise and Whistle).
public enum MarmotKind {
    /// Addressable KeyPackage event (MDK ≥ 0.8.0).
    public static let keyPackage = 30443
    /// The pre-0.8.0 KeyPackage kind, still published as a twin and accepted on input.
    public static let legacyKeyPackage = 443
    /// Replaceable list of the relays a user's KeyPackages live on.
    public static let keyPackageRelayList = 10051
    /// Unsigned Welcome rumor, delivered in a NIP-59 gift wrap.
    public static let welcome = 444
    /// Group event: every MLS message of a group, encrypted and signed by a one-time key.
    public static let groupEvent = 445
    /// Whistle's join request: an unsigned rumor gift-wrapped to an inviter, outside MLS.
    public static let joinRequest = 1080

    // Inner kinds (rumors inside MLS application messages).
    /// Whistle location update.
    public static let location = 1
    /// Whistle leave request.
    public static let leaveRequest = 2
    /// NIP-09 deletion (White Noise).
    public static let deletion = 5
    /// NIP-25 reaction (White Noise).
    public static let reaction = 7
    /// Chat message (White Noise plain text; Whistle's JSON family).
    public static let chat = 9
}

/// Tag values and defaults Marmot events share.
public enum MarmotTag {
    /// The only content encoding MDK ≥ 0.6 accepts.
    public static let base64 = "base64"
    /// The `client` tag value Burrow writes (informational; receivers do not check it).
    public static let defaultClient = "burrow"
}
