import Nostr

extension RelayURL {
    /// Parses a relay URL found in a Marmot event or extension, reported as Marmot's error so
    /// each layer throws one error type.
    static func marmot(_ text: String) throws(MarmotError) -> RelayURL {
        do {
            return try RelayURL(text)
        } catch .invalidRelayURL(let input, let reason) {
            throw .invalidRelayURL(input, reason: reason)
        } catch {
            throw .invalidRelayURL(text, reason: "\(error)")
        }
    }
}
