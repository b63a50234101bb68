import CSodium
import Crypto
import Foundation

/// NIP-44 version 2: versioned, padded, authenticated encryption between two Nostr keys.
///
/// The composition is the NIP's; the primitives come from libraries: ECDH from libsecp256k1,
/// HKDF and HMAC-SHA256 from swift-crypto, raw ChaCha20 (IETF, counter 0) and the
/// constant-time MAC comparison from libsodium.
public enum NIP44 {
    public static let version: UInt8 = 2
    public static let minPlaintextLength = 1
    public static let maxPlaintextLength = 65_535

    /// The long-lived symmetric key of a pair of Nostr keys (HKDF-extract of the ECDH x
    /// coordinate with salt "nip44-v2"). Held in a zeroed-on-release buffer; equality is
    /// constant time.
    /// `@unchecked Sendable`: the buffer is written in `init`, only read after, zeroed in `deinit`.
    public final class ConversationKey: @unchecked Sendable, Equatable {
        private let storage: UnsafeMutablePointer<UInt8>

        public init(bytes: [UInt8]) throws {
            guard bytes.count == 32 else { throw NostrError.nip44InvalidConversationKeyLength(bytes.count) }
            storage = .allocate(capacity: 32)
            storage.initialize(from: bytes, count: 32)
        }

        deinit {
            sodium_memzero(storage, 32)
            storage.deallocate()
        }

        func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
            try body(UnsafeRawBufferPointer(start: storage, count: 32))
        }

        public static func == (lhs: ConversationKey, rhs: ConversationKey) -> Bool {
            sodium_memcmp(lhs.storage, rhs.storage, 32) == 0
        }
    }

    /// The per-message keys HKDF-expand derives from the conversation key and the nonce.
    public struct MessageKeys: Sendable {
        public let chachaKey: [UInt8]
        public let chachaNonce: [UInt8]
        public let hmacKey: [UInt8]
    }

    private static let salt = Array("nip44-v2".utf8)
    private static let sodiumReady: Bool = sodium_init() >= 0

    public static func conversationKey(secretKey: SecretKey, publicKey: PublicKey) throws -> ConversationKey {
        var shared = try secretKey.sharedX(with: publicKey)
        defer { shared.zeroize() }
        let prk = HKDF<SHA256>.extract(inputKeyMaterial: SymmetricKey(data: shared), salt: salt)
        var bytes = prk.withUnsafeBytes { Array($0) }
        defer { bytes.zeroize() }
        return try ConversationKey(bytes: bytes)
    }

    public static func messageKeys(conversationKey: ConversationKey, nonce: [UInt8]) throws -> MessageKeys {
        guard nonce.count == 32 else { throw NostrError.nip44InvalidNonceLength(nonce.count) }
        let okm = conversationKey.withBytes { prk in
            HKDF<SHA256>.expand(pseudoRandomKey: prk, info: nonce, outputByteCount: 76)
        }
        return okm.withUnsafeBytes { raw in
            MessageKeys(chachaKey: Array(raw[0..<32]), chachaNonce: Array(raw[32..<44]), hmacKey: Array(raw[44..<76]))
        }
    }

    /// NIP-44 padding: 32 bytes minimum, then chunks of max(32, nextPowerOfTwo/8).
    public static func calcPaddedLength(_ unpaddedLength: Int) -> Int {
        guard unpaddedLength > 32 else { return 32 }
        let nextPower = 1 << (Int.bitWidth - (unpaddedLength - 1).leadingZeroBitCount)
        let chunk = nextPower <= 256 ? 32 : nextPower / 8
        return chunk * ((unpaddedLength - 1) / chunk + 1)
    }

    /// Encrypts with an explicit 32-byte nonce (tests and vectors; production draws it).
    public static func encrypt(plaintext: String, conversationKey: ConversationKey, nonce: [UInt8]) throws -> String {
        let utf8 = Array(plaintext.utf8)
        guard utf8.count >= minPlaintextLength, utf8.count <= maxPlaintextLength else {
            throw NostrError.nip44PlaintextLength(utf8.count)
        }
        let keys = try messageKeys(conversationKey: conversationKey, nonce: nonce)
        var padded = [UInt8](repeating: 0, count: 2 + calcPaddedLength(utf8.count))
        padded[0] = UInt8(utf8.count >> 8)
        padded[1] = UInt8(utf8.count & 0xff)
        padded.replaceSubrange(2..<(2 + utf8.count), with: utf8)
        defer { padded.zeroize() }
        let ciphertext = chacha20(padded, keys)
        var payload: [UInt8] = [version]
        payload.reserveCapacity(1 + 32 + ciphertext.count + 32)
        payload.append(contentsOf: nonce)
        payload.append(contentsOf: ciphertext)
        payload.append(contentsOf: mac(keys, nonce: nonce, ciphertext: ciphertext[...]))
        return base64Encode(payload)
    }

    /// Encrypts with a fresh nonce drawn from `rng`.
    public static func encrypt<R: RandomNumberGenerator>(
        plaintext: String, conversationKey: ConversationKey, using rng: inout R
    ) throws -> String {
        try encrypt(plaintext: plaintext, conversationKey: conversationKey, nonce: rng.bytes(32))
    }

    /// Authenticates and decrypts a payload; every malformed input is a typed error.
    public static func decrypt(payload: String, conversationKey: ConversationKey) throws -> String {
        let utf8 = payload.utf8
        if utf8.first == UInt8(ascii: "#") { throw NostrError.nip44UnknownVersion(-1) }
        guard utf8.count >= 132, utf8.count <= 87_472 else { throw NostrError.nip44InvalidPayloadLength(utf8.count) }
        let data = try base64Decode(payload)
        guard data.count >= 99, data.count <= 65_603 else { throw NostrError.nip44InvalidPayloadLength(data.count) }
        guard data[0] == version else { throw NostrError.nip44UnknownVersion(Int(data[0])) }
        let nonce = Array(data[1..<33])
        let ciphertext = data[33..<(data.count - 32)]
        let givenMAC = Array(data[(data.count - 32)...])
        let keys = try messageKeys(conversationKey: conversationKey, nonce: nonce)
        let expectedMAC = mac(keys, nonce: nonce, ciphertext: ciphertext)
        guard sodium_memcmp(expectedMAC, givenMAC, 32) == 0 else { throw NostrError.nip44InvalidMAC }
        var padded = chacha20(Array(ciphertext), keys)
        defer { padded.zeroize() }
        guard padded.count >= 2 else { throw NostrError.nip44InvalidPadding }
        let length = Int(padded[0]) << 8 | Int(padded[1])
        guard length >= minPlaintextLength, padded.count == 2 + calcPaddedLength(length) else {
            throw NostrError.nip44InvalidPadding
        }
        guard let plaintext = String(validating: padded[2..<(2 + length)], as: UTF8.self) else {
            throw NostrError.nip44InvalidUTF8
        }
        return plaintext
    }

    // MARK: Primitives (library calls only)

    private static func chacha20(_ input: [UInt8], _ keys: MessageKeys) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: input.count)
        _ = crypto_stream_chacha20_ietf_xor(&output, input, UInt64(input.count), keys.chachaNonce, keys.chachaKey)
        return output
    }

    private static func mac(_ keys: MessageKeys, nonce: [UInt8], ciphertext: ArraySlice<UInt8>) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: keys.hmacKey))
        hmac.update(data: nonce)
        hmac.update(data: ciphertext)
        return Array(hmac.finalize())
    }

    private static func base64Encode(_ bytes: [UInt8]) -> String {
        _ = sodiumReady
        let capacity = (bytes.count + 2) / 3 * 4 + 1
        var out = [CChar](repeating: 0, count: capacity)
        _ = sodium_bin2base64(&out, capacity, bytes, bytes.count, sodium_base64_VARIANT_ORIGINAL)
        return String(decoding: out.prefix(capacity - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Strict standard base64 with padding; any other character or trailing data fails.
    private static func base64Decode(_ string: String) throws -> [UInt8] {
        _ = sodiumReady
        let input = Array(string.utf8)
        var out = [UInt8](repeating: 0, count: input.count / 4 * 3 + 3)
        var length = 0
        var end: UnsafePointer<CChar>?
        let status = input.withUnsafeBufferPointer { inBuf in
            inBuf.withMemoryRebound(to: CChar.self) { chars in
                let rc = sodium_base642bin(&out, out.count, chars.baseAddress, chars.count, nil, &length, &end,
                                           sodium_base64_VARIANT_ORIGINAL)
                // The whole string must be consumed.
                if rc == 0, let end, end != chars.baseAddress! + chars.count { return Int32(-1) }
                return rc
            }
        }
        guard status == 0 else { throw NostrError.nip44InvalidBase64 }
        return Array(out.prefix(length))
    }
}
