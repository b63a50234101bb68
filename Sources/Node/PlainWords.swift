import Foundation

/// Errors in words for people (issue 22, item 9): an error type without a description of its
/// own prints as a Swift value (`mls(MLS.MLSError.handshakeFromPastEpoch(epoch: 1))`); this
/// turns such a value into "handshake from past epoch (epoch 1)". Errors that describe
/// themselves are left as they are.
enum PlainWords {
    static func describe(_ error: Error) -> String {
        humanize(String(describing: error))
    }

    static func humanize(_ text: String) -> String {
        guard looksLikeAValue(text) else { return text }
        // Module and type prefixes: "MLS.MLSError.handshake…" → "handshake…" (not inside a
        // quoted payload, which is someone's sentence).
        let quote = text.firstIndex(of: "\"") ?? text.endIndex
        var value = String(text[..<quote])
        while let range = value.range(of: #"\b[A-Z][A-Za-z0-9_]*\.(?=[A-Za-z])"#, options: .regularExpression) {
            value.removeSubrange(range)
        }
        value += text[quote...]
        // A category wrapper around the real case: "mls(handshake…)" → "handshake…".
        while let open = value.firstIndex(of: "("), value.hasSuffix(")"),
              ["mls", "nostr", "store", "marmot", "pigeon", "relay", "sqlite"].contains(value[..<open].lowercased()) {
            value = String(value[value.index(after: open)..<value.index(before: value.endIndex)])
        }
        // The case name in words; its payload as written, a lone string unquoted.
        let head = value.prefix { $0 != "(" }
        var payload = String(value.dropFirst(head.count))
        var words = ""
        var previousWasLower = false
        for character in head {
            if character.isUppercase, previousWasLower { words.append(" ") }
            words.append(character.isUppercase && previousWasLower ? Character(character.lowercased()) : character)
            previousWasLower = character.isLowercase || character.isNumber
        }
        guard payload.hasPrefix("("), payload.hasSuffix(")") else { return words }
        payload = String(payload.dropFirst().dropLast())
        if payload.hasPrefix("\""), payload.hasSuffix("\""), payload.count >= 2 {
            let quoted = payload.dropFirst().dropLast().replacingOccurrences(of: "\\'", with: "'").replacingOccurrences(of: "\\\"", with: "\"")
            return words + ": " + quoted
        }
        return words + " (" + payload.replacingOccurrences(of: ": ", with: " ") + ")"
    }

    /// A Swift value's printout: an identifier, optionally with a parenthesized payload, and no spaces before it.
    private static func looksLikeAValue(_ text: String) -> Bool {
        guard let first = text.first, first.isLetter else { return false }
        let head = text.prefix { $0 != "(" }
        return !head.contains(" ") && (text.contains("(") || head.contains { $0.isUppercase })
    }
}
