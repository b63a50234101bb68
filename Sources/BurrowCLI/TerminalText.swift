/// Human output carries text strangers chose (DM text, contact, beacon and joiner names,
/// mesh nicknames, group names): this is the one place that makes it safe for a terminal.
/// Control characters other than newline and tab (C0, DEL, C1: escape sequences that could
/// rewrite the screen or the title) and the bidirectional overrides and isolates (which can
/// make text read in another order than it is) are shown as `?`. JSON output is not touched:
/// its serializer escapes what JSON requires, and a program reads it, not a terminal.
enum TerminalText {
    static func sanitized(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isUnsafe) else { return text }
        return String(String.UnicodeScalarView(text.unicodeScalars.map { isUnsafe($0) ? "?" : $0 }))
    }

    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x0A, 0x09: return false
        case 0x00...0x1F, 0x7F...0x9F: return true
        case 0x202A...0x202E, 0x2066...0x2069, 0x200E, 0x200F, 0x061C: return true
        default: return false
        }
    }
}
