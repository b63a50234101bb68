/// Section 5: the Double Ratchet of one session.
///
/// Constants are the profile's: at most 1000 keys skipped in one chain, 2,000 stored skipped
/// keys per session (the oldest stored is evicted), skipped keys expire after 30 days, and the
/// last 32 remote ratchet keys replaced by DH steps are remembered as retired.
///
/// `decrypt` is transactional: the caller's value is replaced only after the AEAD check (a
/// value type: the work happens on a copy). Steps 2–4 read only the header, so a forged header
/// costs no derivation and a header causes at most 2 × 1000.
public struct DoubleRatchet: Sendable, Equatable {
    public static let maxSkip: UInt32 = 1000
    public static let maxStoredSkippedKeys = 2000
    public static let skippedKeyLifetimeMs: UInt64 = 30 * 24 * 3600 * 1000
    public static let retiredKeyCount = 32

    /// A message key kept for a message not yet received.
    struct SkippedKey: Sendable, Equatable {
        let dh: X25519PublicKey
        let n: UInt32
        let messageKey: SecretBytes
        let storedAt: UInt64
    }

    var dhs: X25519PrivateKey
    var dhr: X25519PublicKey?
    var rootKey: SecretBytes
    var sendingChain: SecretBytes?
    var receivingChain: SecretBytes?
    var ns: UInt32 = 0
    var nr: UInt32 = 0
    var pn: UInt32 = 0
    /// In the order stored: eviction takes the front.
    var skipped: [SkippedKey] = []
    /// The last 32 DHr values replaced by DH steps, oldest first.
    var retired: [X25519PublicKey] = []

    // MARK: Start (5.2)

    /// Initiator after handshake2: DHs = (r_i, R_i), DHr = R_r, (RK, CKs) = KDF_RK(root, DH(r_i, R_r)).
    static func initiator(root: [UInt8], ratchetKey: X25519PrivateKey, remoteRatchetKey: X25519PublicKey) throws(PigeonError) -> DoubleRatchet {
        guard let dh = try? ratchetKey.sharedSecret(with: remoteRatchetKey) else { throw .handshakeFailed }
        let (rk, cks) = RatchetKDF.root(root, dh)
        return DoubleRatchet(dhs: ratchetKey, dhr: remoteRatchetKey, rootKey: SecretBytes(rk), sendingChain: SecretBytes(cks), receivingChain: nil)
    }

    /// Responder after handshake3: DHs = (r_r, R_r), RK = root, then the DH step with R_i as if
    /// header (R_i, 0, 0) had arrived; `nextKey` is the ratchet key pair that step makes.
    static func responder(
        root: [UInt8], ratchetKey: X25519PrivateKey, remoteRatchetKey: X25519PublicKey, nextKey: X25519PrivateKey
    ) throws(PigeonError) -> DoubleRatchet {
        var state = DoubleRatchet(dhs: ratchetKey, dhr: nil, rootKey: SecretBytes(root), sendingChain: nil, receivingChain: nil)
        do { try state.dhStep(remote: remoteRatchetKey, newKey: nextKey) } catch { throw .handshakeFailed }
        return state
    }

    // MARK: Sending (5.3)

    /// Encrypts `padded` into a message frame of `session`. The caller stores the new state
    /// before the frame leaves.
    mutating func encrypt(padded: [UInt8], session: SessionID, binding: [UInt8]) throws(PigeonError) -> [UInt8] {
        guard let cks = sendingChain else { throw .sessionUnknown }
        let (nextChain, mk) = RatchetKDF.chain(cks.bytes)
        let header = RatchetHeader(dh: dhs.publicKey, pn: pn, n: ns)
        let prefix = Frame.header(.message, session) + header.bytes
        let (key, nonce) = RatchetKDF.messageKeys(mk)
        guard let sealed = try? Primitives.aesGCMSeal(key: key, nonce: nonce, plaintext: padded, ad: binding + prefix) else {
            throw .decryptFailed
        }
        guard ns < UInt32.max else { throw .skipLimit }
        sendingChain = SecretBytes(nextChain)
        ns += 1
        return prefix + sealed
    }

    /// Steps the sending chain `count` times without sending (lost messages, in the vectors).
    mutating func skipSending(_ count: Int) throws(PigeonError) {
        guard var cks = sendingChain?.bytes else { throw .sessionUnknown }
        guard count >= 0, UInt64(ns) + UInt64(count) < UInt64(UInt32.max) else { throw .skipLimit }
        for _ in 0..<count { cks = RatchetKDF.chain(cks).chainKey }
        sendingChain = SecretBytes(cks)
        ns += UInt32(count)
    }

    // MARK: Receiving (5.4)

    /// Deletes skipped keys stored more than 30 days before `now`.
    mutating func expireSkippedKeys(now: UInt64) {
        skipped.removeAll { now > $0.storedAt && now - $0.storedAt > Self.skippedKeyLifetimeMs }
    }

    /// Opens a message frame; returns the padded plaintext. Works on a copy: on a throw `self`
    /// is unchanged. A DH step draws a ratchet key from `keys`; on a throw the engine restores
    /// its key source, so the key pair made in a refused step is discarded, not consumed.
    mutating func decrypt<K: PigeonKeySource>(
        frame: Frame, binding: [UInt8], now: UInt64, keys: inout K
    ) throws(PigeonError) -> [UInt8] {
        var state = self
        state.expireSkippedKeys(now: now)
        let header = RatchetHeader(body: frame.body)
        let ad = binding + Array(frame.bytes[0..<(Frame.headerLength + RatchetHeader.length)])
        let sealed = Array(frame.body[RatchetHeader.length...])

        // 1. A skipped key for (DH, n).
        if let index = state.skipped.firstIndex(where: { $0.n == header.n && $0.dh == header.dh }) {
            let plaintext = try Self.open(state.skipped[index].messageKey.bytes, sealed: sealed, ad: ad)
            state.skipped.remove(at: index)
            self = state
            return plaintext
        }

        if let dhr = state.dhr, header.dh == dhr {
            // 2. The current receiving chain.
            guard header.n >= state.nr else { throw .messageReplayed }
            guard header.n - state.nr <= Self.maxSkip else { throw .skipLimit }
            guard state.receivingChain != nil else { throw .decryptFailed }
        } else if state.retired.contains(header.dh) {
            // 3. A chain already replaced.
            throw .messageReplayed
        } else {
            // 4. A new chain: bounds first, from the header alone.
            if state.receivingChain != nil, Int64(header.pn) - Int64(state.nr) > Int64(Self.maxSkip) { throw .skipLimit }
            guard header.n <= Self.maxSkip else { throw .skipLimit }
            if state.receivingChain != nil { state.storeSkipped(until: header.pn, now: now) }
            do { try state.dhStep(remote: header.dh, newKey: keys.nextRatchetKey()) } catch { throw .decryptFailed }
        }

        // 5. Skip to n, derive, open.
        state.storeSkipped(until: header.n, now: now)
        guard let ckr = state.receivingChain else { throw .decryptFailed }
        let (nextChain, mk) = RatchetKDF.chain(ckr.bytes)
        state.receivingChain = SecretBytes(nextChain)
        state.nr += 1
        let plaintext = try Self.open(mk, sealed: sealed, ad: ad)

        // 6. Commit, with the storage bound.
        if state.skipped.count > Self.maxStoredSkippedKeys {
            state.skipped.removeFirst(state.skipped.count - Self.maxStoredSkippedKeys)
        }
        self = state
        return plaintext
    }

    private static func open(_ mk: [UInt8], sealed: [UInt8], ad: [UInt8]) throws(PigeonError) -> [UInt8] {
        let (key, nonce) = RatchetKDF.messageKeys(mk)
        guard let plaintext = try? Primitives.aesGCMOpen(key: key, nonce: nonce, sealed: sealed, ad: ad) else { throw .decryptFailed }
        return plaintext
    }

    /// Stores the keys Nr … until−1 of the receiving chain as skipped (callers checked the bound).
    private mutating func storeSkipped(until: UInt32, now: UInt64) {
        guard let dhr, var ck = receivingChain?.bytes, nr < until else { return }
        while nr < until {
            let (next, mk) = RatchetKDF.chain(ck)
            skipped.append(SkippedKey(dh: dhr, n: nr, messageKey: SecretBytes(mk), storedAt: now))
            ck = next
            nr += 1
        }
        receivingChain = SecretBytes(ck)
    }

    struct ZeroDH: Error {}

    /// The DH step: retire DHr; PN = Ns; Ns = Nr = 0; DHr = remote; (RK, CKr) = KDF_RK(RK,
    /// DH(DHs, DHr)); DHs = newKey; (RK, CKs) = KDF_RK(RK, DH(DHs, DHr)).
    private mutating func dhStep(remote: X25519PublicKey, newKey: X25519PrivateKey) throws(ZeroDH) {
        if let old = dhr {
            retired.append(old)
            if retired.count > Self.retiredKeyCount { retired.removeFirst(retired.count - Self.retiredKeyCount) }
        }
        pn = ns
        ns = 0
        nr = 0
        dhr = remote
        guard let dh1 = try? dhs.sharedSecret(with: remote) else { throw ZeroDH() }
        let (rk1, ckr) = RatchetKDF.root(rootKey.bytes, dh1)
        dhs = newKey
        guard let dh2 = try? dhs.sharedSecret(with: remote) else { throw ZeroDH() }
        let (rk2, cks) = RatchetKDF.root(rk1, dh2)
        rootKey = SecretBytes(rk2)
        receivingChain = SecretBytes(ckr)
        sendingChain = SecretBytes(cks)
    }

    // MARK: Inspection (the vectors' `state` step; public values and the root key's bytes
    // only through `RatchetSnapshot`)

    var snapshot: RatchetSnapshot {
        RatchetSnapshot(rootKey: rootKey, dhsPublic: dhs.publicKey, dhr: dhr, ns: ns, nr: nr, pn: pn, skippedCount: skipped.count)
    }
}

/// What the vectors' `state` step shows of a ratchet. The root key stays a `SecretBytes`.
public struct RatchetSnapshot: Sendable, Equatable {
    public let rootKey: SecretBytes
    public let dhsPublic: X25519PublicKey
    public let dhr: X25519PublicKey?
    public let ns: UInt32
    public let nr: UInt32
    public let pn: UInt32
    public let skippedCount: Int
}
