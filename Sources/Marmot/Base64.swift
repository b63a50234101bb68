import CSodium

/// Standard base64 (RFC 4648 alphabet, `=` padding) as MDK's `base64::STANDARD` engine uses it:
/// decoding requires canonical padding and zero trailing bits, and rejects whitespace and any
/// other character. Through libsodium so the rules are a library's, not ours.
enum StrictBase64 {
    private static let sodiumReady: Bool = sodium_init() >= 0

    static func encode(_ bytes: [UInt8]) -> String {
        _ = sodiumReady
        let capacity = (bytes.count + 2) / 3 * 4 + 1
        var out = [CChar](repeating: 0, count: capacity)
        _ = sodium_bin2base64(&out, capacity, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(decoding: out.prefix(capacity - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The decoded bytes, or nil when `string` is not canonical padded standard base64.
    static func decode(_ string: String) -> [UInt8]? {
        _ = sodiumReady
        let input = Array(string.utf8)
        guard input.count % 4 == 0 else { return nil }
        if input.isEmpty { return [] }
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3)
        var length = 0
        var end: UnsafePointer<CChar>?
        let status: Int32 = input.withUnsafeBufferPointer { inBuf in
            inBuf.withMemoryRebound(to: CChar.self) { chars in
                guard let base = chars.baseAddress else { return -1 }
                let rc = sodium_base642bin(&out, out.count, base, chars.count, nil, &length, &end,
                                           sodium_base64_VARIANT_ORIGINAL)
                // The whole string must be consumed (libsodium stops at the first non-alphabet byte).
                if rc == 0, end != base + chars.count { return -1 }
                return rc
            }
        }
        guard status == 0 else { return nil }
        return Array(out.prefix(length))
    }

    /// Decodes `string` or throws `MarmotError.invalidBase64(field:)`.
    static func decode(_ string: String, field: String) throws -> [UInt8] {
        guard let bytes = decode(string) else { throw MarmotError.invalidBase64(field: field) }
        return bytes
    }
}
