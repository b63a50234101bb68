import Crypto

/// The exchange's state as records a store keeps (feed.md 7.3: `feed_bundles`, `feed_kem`,
/// `feed_pair_keys`), and the exchange rebuilt from them.
extension FeedKeyExchange {
    public struct Encapsulation: Sendable, Equatable {
        public let mine: [UInt8]
        public let theirs: [UInt8]
        public let ciphertext: [UInt8]
        public let sharedSecret: [UInt8]

        public init(mine: [UInt8], theirs: [UInt8], ciphertext: [UInt8], sharedSecret: [UInt8]) {
            self.mine = mine
            self.theirs = theirs
            self.ciphertext = ciphertext
            self.sharedSecret = sharedSecret
        }
    }

    /// What is kept of one contact: its current bundle and presence key, the encapsulations
    /// either way, and the pair keys (oldest first).
    public struct ContactRecord: Sendable {
        public var bundle: PQBundle?
        public var presenceKey: [UInt8]?
        public var inbound: [Encapsulation]
        public var outbound: [Encapsulation]
        public var pairKeys: [PairKeyRecord]

        public init(bundle: PQBundle?, presenceKey: [UInt8]?, inbound: [Encapsulation], outbound: [Encapsulation], pairKeys: [PairKeyRecord]) {
            self.bundle = bundle
            self.presenceKey = presenceKey
            self.inbound = inbound
            self.outbound = outbound
            self.pairKeys = pairKeys
        }
    }

    /// Own bundles, oldest first, with their ML-KEM seeds.
    public var ownBundles: [(bundle: PQBundle, kemSeed: [UInt8])] { own.map { ($0.bundle, $0.kemSeed) } }

    /// Identity keys of the contacts the exchange knows.
    public var contactKeys: [[UInt8]] { Array(contacts.keys) }

    public func record(of peer: [UInt8]) -> ContactRecord? {
        guard let contact = contacts[peer] else { return nil }
        func list(_ pairs: [BundlePair: (ciphertext: [UInt8], sharedSecret: [UInt8])]) -> [Encapsulation] {
            pairs.map { Encapsulation(mine: $0.key.mine, theirs: $0.key.theirs, ciphertext: $0.value.ciphertext, sharedSecret: $0.value.sharedSecret) }
        }
        return ContactRecord(bundle: contact.bundle, presenceKey: contact.presenceKey, inbound: list(contact.inbound),
                             outbound: list(contact.outbound), pairKeys: contact.pairKeys)
    }

    /// The exchange as a store kept it.
    public init(identitySeed: [UInt8], staticKey: Curve25519.KeyAgreement.PrivateKey, own: [(bundle: PQBundle, kemSeed: [UInt8])],
                contacts: [[UInt8]: ContactRecord]) {
        self.init(identitySeed: identitySeed, staticKey: staticKey)
        self.own = own.map { OwnBundle(bundle: $0.bundle, kemSeed: $0.kemSeed) }
        for (peer, record) in contacts {
            var contact = Contact()
            contact.bundle = record.bundle
            contact.presenceKey = record.presenceKey
            for e in record.inbound { contact.inbound[BundlePair(mine: e.mine, theirs: e.theirs)] = (e.ciphertext, e.sharedSecret) }
            for e in record.outbound { contact.outbound[BundlePair(mine: e.mine, theirs: e.theirs)] = (e.ciphertext, e.sharedSecret) }
            contact.pairKeys = record.pairKeys
            self.contacts[peer] = contact
        }
    }

    /// Forgets a removed contact: its bundle, encapsulations and pair keys (5.3 rotation).
    public mutating func forget(_ peer: [UInt8]) { contacts[peer] = nil }

    /// Whether a pair key exists for our current bundle and the contact's.
    public func isEstablished(with peer: [UInt8]) -> Bool {
        guard let mine = currentBundle, let theirs = contacts[peer]?.bundle else { return false }
        return contacts[peer]?.pairKeys.contains { $0.mine == mine.hash && $0.theirs == theirs.hash } ?? false
    }
}
