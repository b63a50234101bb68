import MLS
import Marmot
import Nostr

/// Marmot's NostrGroupData (extension 0xF2EE, MIP-01) from its `extension_data`, and the relay
/// URL parser its relay list goes through.
///
/// Properties: a decodable value re-encodes (never `groupDataUnencodable`); its encoding
/// decodes to the same value with each relay re-read from its display form (what the encoding
/// carries), also inside a GroupContext extension list; after that one step encoding is
/// stable. A parsed relay URL parses again from its serialization and its display form, and the
/// display form is then stable.
///
/// Two rust-nostr 0.44 `RelayUrl` behaviours, mirrored by `RelayURL` for byte compatibility
/// with MDK, are checked as they are rather than counted as findings:
/// - the display form drops a trailing slash the input did not have even when dot segments
///   made it (`wss://a.b/c/.` → `wss://a.b/c`), so it can name another URL;
/// - the "only one `://`" rule applies to the input, so `wss:./0:0://` parses but its own
///   serialization `wss://./0:0://` does not; group data holding it cannot be read back.
public enum GroupDataTarget: FuzzTarget {
    public static let name = "group-data"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        var outcome = FuzzOutcome.rejected("NostrGroupData")
        if let data = try? NostrGroupData(extensionData: bytes) {
            outcome = try checkRoundTrip(data)
        }
        if let text = String(validating: bytes, as: UTF8.self), let url = try? RelayURL(text) {
            try checkRoundTrip(url)
            if !outcome.isAccepted { outcome = .accepted("RelayURL") }
        }
        return outcome
    }

    /// Whether `url`'s serialization repeats `://` (the second behaviour above).
    static func hasRepeatedSchemeSeparator(_ url: RelayURL) -> Bool {
        url.serialization.components(separatedBy: "://").count > 2
    }

    static func checkRoundTrip(_ data: NostrGroupData) throws -> FuzzOutcome {
        let encoded: [UInt8]
        do {
            encoded = try data.extensionData()
        } catch {
            throw PropertyViolation(name, "decoded group data (version \(data.version)) does not encode: \(error)")
        }
        var expected = data
        var reread: [RelayURL] = []
        for relay in data.relays {
            guard let again = try? RelayURL(relay.string) else {
                guard hasRepeatedSchemeSeparator(relay) else {
                    throw PropertyViolation(name, "a relay of decoded group data does not parse from its display form")
                }
                guard (try? NostrGroupData(extensionData: encoded)) == nil else {
                    throw PropertyViolation(name, "group data decoded with a relay that cannot be parsed")
                }
                return .accepted("NostrGroupData (relay unreadable once written)")
            }
            reread.append(again)
        }
        expected.relays = reread
        guard let decoded = try? NostrGroupData(extensionData: encoded) else {
            throw PropertyViolation(name, "the encoding of decoded group data does not decode")
        }
        guard decoded == expected else {
            throw PropertyViolation(name, "group data changed across encode/decode (version \(data.version))")
        }
        guard let normalized = try? decoded.extensionData(),
              (try? NostrGroupData(extensionData: normalized).extensionData()) == normalized
        else { throw PropertyViolation(name, "encoding group data is not stable") }
        // As the GroupContext carries it.
        guard let list = try? Extensions([data.groupContextExtension()]),
              let back = try? Extensions(tlsSerialized: list.tlsSerialized),
              let fromList = try? NostrGroupData(extensions: back), fromList == expected
        else {
            throw PropertyViolation(name, "group data does not survive a GroupContext extension list")
        }
        return .accepted("NostrGroupData")
    }

    static func checkRoundTrip(_ url: RelayURL) throws {
        guard let again = try? RelayURL(url.serialization) else {
            guard hasRepeatedSchemeSeparator(url) else {
                throw PropertyViolation(name, "a relay URL's serialization does not parse")
            }
            return
        }
        guard again == url, again.serialization == url.serialization else {
            throw PropertyViolation(name, "a relay URL's serialization parses to another URL")
        }
        guard let shown = try? RelayURL(url.string) else {
            throw PropertyViolation(name, "a relay URL's display form does not parse")
        }
        guard shown == url || url.string != url.serialization else {
            throw PropertyViolation(name, "a relay URL printed in full parses to another URL")
        }
        guard (try? RelayURL(shown.string))?.string == shown.string else {
            throw PropertyViolation(name, "a relay URL's display form is not stable")
        }
    }
}
