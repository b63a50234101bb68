import CSecp256k1

/// libsecp256k1 called directly, with nothing around it: the ceiling for Burrow's BIP-340
/// sign and verify. Inputs are prepared once; the loops call only the library.
struct RawSecp256k1 {
    enum Failure: Error, CustomStringConvertible {
        case setup(String)
        var description: String {
            switch self {
            case .setup(let step): return "raw libsecp256k1 setup failed at \(step)"
            }
        }
    }

    private let context: OpaquePointer
    private var keypair = secp256k1_keypair()
    private var xonly = secp256k1_xonly_pubkey()
    private let message: [UInt8]
    private let auxRand: [UInt8]
    private var signature = [UInt8](repeating: 0, count: 64)
    private var scratch = [UInt8](repeating: 0, count: 64)

    /// `secret` must be a valid 32-byte secp256k1 scalar; `message` the 32 bytes to sign.
    init(secret: [UInt8], message: [UInt8], auxRand: [UInt8]) throws {
        guard let context = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
            throw Failure.setup("context_create")
        }
        self.context = context
        self.message = message
        self.auxRand = auxRand
        guard secp256k1_keypair_create(context, &keypair, secret) == 1 else { throw Failure.setup("keypair_create") }
        guard secp256k1_keypair_xonly_pub(context, &xonly, nil, &keypair) == 1 else {
            throw Failure.setup("keypair_xonly_pub")
        }
        guard secp256k1_schnorrsig_sign32(context, &signature, message, &keypair, auxRand) == 1 else {
            throw Failure.setup("schnorrsig_sign32")
        }
        guard verify() else { throw Failure.setup("schnorrsig_verify of a fresh signature") }
    }

    /// `secp256k1_schnorrsig_verify` of the prepared signature, message and x-only key.
    func verify() -> Bool {
        withUnsafePointer(to: xonly) { key in
            secp256k1_schnorrsig_verify(context, signature, message, message.count, key) == 1
        }
    }

    /// `secp256k1_schnorrsig_sign32` of the prepared message (fixed aux randomness).
    mutating func sign() -> Bool {
        secp256k1_schnorrsig_sign32(context, &scratch, message, &keypair, auxRand) == 1
    }

    func destroy() { secp256k1_context_destroy(context) }
}
