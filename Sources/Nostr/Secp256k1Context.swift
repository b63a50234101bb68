import CSecp256k1

/// The one libsecp256k1 context of the process: created once, randomized once, then only read.
///
/// libsecp256k1 allows concurrent use of a context by every function except
/// `secp256k1_context_randomize`/`destroy`, which only run here, before publication.
/// `@unchecked Sendable`: for the reason above (the library's own thread-safety contract).
final class Secp256k1Context: @unchecked Sendable {
    static let shared = Secp256k1Context()

    let pointer: OpaquePointer

    private init() {
        // A context can only fail to allocate; without one no key operation is possible.
        guard let ctx = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
            fatalError("secp256k1_context_create failed (out of memory)")
        }
        // Blinding seed for side-channel protection of signing and key generation. It never
        // influences any output, so drawing it from the system here keeps the core replayable.
        var seed = [UInt8](repeating: 0, count: 32)
        var system = SystemRandomNumberGenerator()
        for i in 0..<32 { seed[i] = UInt8.random(in: 0...255, using: &system) }
        _ = secp256k1_context_randomize(ctx, seed)
        pointer = ctx
    }
}
