import CSodium

/// Bytes that must not outlive their use: allocated with `sodium_malloc` (guard pages, locked
/// against swapping where the system allows) and wiped by `sodium_free` when released.
/// Used for the derived database key and its hex literal; never printed.
final class SecretBuffer {
    let count: Int
    private let pointer: UnsafeMutablePointer<UInt8>

    init(count: Int) throws {
        guard Sodium.isReady, count > 0, let raw = sodium_malloc(count) else { throw StoreError.keyDerivationFailed }
        sodium_memzero(raw, count)
        self.count = count
        pointer = raw.bindMemory(to: UInt8.self, capacity: count)
    }

    deinit { sodium_free(pointer) }

    func withUnsafeBytes<T>(_ body: (UnsafePointer<UInt8>, Int) throws -> T) rethrows -> T {
        try body(UnsafePointer(pointer), count)
    }

    func withUnsafeMutableBytes<T>(_ body: (UnsafeMutablePointer<UInt8>, Int) throws -> T) rethrows -> T {
        try body(pointer, count)
    }
}

extension SecretBuffer: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    var description: String { "SecretBuffer(\(count) bytes, redacted)" }
    var debugDescription: String { description }
    var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}

/// libsodium must be initialised once per process before any other call; `sodium_init` is
/// idempotent and thread-safe, and a Swift global is initialised exactly once.
enum Sodium {
    static let isReady: Bool = sodium_init() >= 0

    /// Lowercase hex through libsodium's constant-time encoder (used for salts and key literals).
    static func hex(_ bytes: [UInt8]) -> String {
        var out = [CChar](repeating: 0, count: bytes.count * 2 + 1)
        bytes.withUnsafeBufferPointer { b in
            _ = sodium_bin2hex(&out, out.count, b.baseAddress, b.count)
        }
        return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes exactly `expectedCount` bytes of hex; nil for anything else.
    static func unhex(_ text: String, expectedCount: Int) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count == expectedCount * 2 else { return nil }
        var out = [UInt8](repeating: 0, count: expectedCount)
        var written = 0
        let rc = chars.withUnsafeBufferPointer { c in
            c.withMemoryRebound(to: CChar.self) { cc in
                sodium_hex2bin(&out, out.count, cc.baseAddress, cc.count, nil, &written, nil)
            }
        }
        guard rc == 0, written == expectedCount else { return nil }
        return out
    }
}
