/// Section 3.1: what a message frame carries, before padding.
///
///     content = kind (1) ‖ msg_id (16) ‖ sent_at (8) ‖ body
public struct MessageContent: Sendable, Hashable {
    public static let headerLength = 25
    public static let maximumLength = 16_382
    public static let maximumTextBody = maximumLength - headerLength  // 16,357
    public static let maximumReceiptIDs = 64

    /// The content kinds of section 3.1; others are decrypted and ignored.
    public enum Kind: UInt8, Sendable {
        case ack = 0
        case text = 1
        case receipt = 2
        case card = 3
    }

    public let kind: UInt8
    /// Random, chosen by the sender; names the message on both sides.
    public let msgID: [UInt8]
    /// Milliseconds since the epoch, the sender's clock.
    public let sentAt: UInt64
    public let body: [UInt8]

    /// `msg_id` must be 16 bytes; the whole content at most 16,382 (`message_too_large`).
    public init(kind: UInt8, msgID: [UInt8], sentAt: UInt64, body: [UInt8]) throws(PigeonError) {
        guard msgID.count == 16 else { throw .badPlaintext }
        guard Self.headerLength + body.count <= Self.maximumLength else { throw .messageTooLarge }
        self.kind = kind
        self.msgID = msgID
        self.sentAt = sentAt
        self.body = body
    }

    public var knownKind: Kind? { Kind(rawValue: kind) }

    /// The encoded content.
    public var bytes: [UInt8] {
        var out: [UInt8] = [kind]
        out += msgID
        out.appendBigEndian(sentAt)
        out += body
        return out
    }

    /// Decodes content and applies the kind's rules (text: UTF-8, non-empty; receipt: 1–64
    /// msg_ids; ack: empty). A card body is checked by the engine (it needs the contact).
    static func decode(_ bytes: [UInt8]) throws(PigeonError) -> MessageContent {
        guard bytes.count >= headerLength, bytes.count <= maximumLength else { throw .badPlaintext }
        let content = try MessageContent(
            kind: bytes[0], msgID: Array(bytes[1..<17]), sentAt: readU64(bytes[17..<25]), body: Array(bytes[25...]))
        switch content.knownKind {
        case .ack:
            guard content.body.isEmpty else { throw .badPlaintext }
        case .text:
            guard !content.body.isEmpty, String(validating: content.body, as: UTF8.self) != nil else { throw .badPlaintext }
        case .receipt:
            guard !content.body.isEmpty, content.body.count % 16 == 0,
                  content.body.count / 16 <= maximumReceiptIDs
            else { throw .badPlaintext }
        case .card, nil:
            break
        }
        return content
    }

    /// The msg_ids a receipt names.
    public var receiptIDs: [[UInt8]] {
        guard knownKind == .receipt else { return [] }
        return stride(from: 0, to: body.count, by: 16).map { Array(body[$0..<min($0 + 16, body.count)]) }
    }
}

/// Section 3.1 padding: `u16 len(content) ‖ content ‖ zeros`, to the smallest bucket that fits.
public enum Padding {
    public static let buckets = [256, 1024, 4096, 16_384]

    /// The padded plaintext for `content` (at most 16,382 bytes: `message_too_large`).
    public static func pad(_ content: [UInt8]) throws(PigeonError) -> [UInt8] {
        guard content.count <= MessageContent.maximumLength,
              let bucket = buckets.first(where: { $0 >= 2 + content.count })
        else { throw .messageTooLarge }
        var out = [UInt8].bigEndian(UInt16(content.count))
        out += content
        out += [UInt8](repeating: 0, count: bucket - out.count)
        return out
    }

    /// Checks 25 ≤ length ≤ padded − 2 and zero padding (`bad_plaintext`); returns the content.
    public static func unpad(_ padded: [UInt8]) throws(PigeonError) -> [UInt8] {
        guard padded.count >= 2 else { throw .badPlaintext }
        let length = Int(padded[0]) << 8 | Int(padded[1])
        guard length >= MessageContent.headerLength, length <= padded.count - 2 else { throw .badPlaintext }
        guard isAllZero(padded[(2 + length)...]) else { throw .badPlaintext }
        return Array(padded[2..<(2 + length)])
    }
}
