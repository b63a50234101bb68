/// A pre-shared key and the id it was announced under (a PreSharedKey proposal or the psks of
/// GroupSecrets). The caller resolves the value: an external PSK from the application, a
/// resumption PSK from a past epoch's `EpochSecrets.resumptionPSK`.
public struct PreSharedKeyInput: Sendable {
    public let id: PreSharedKeyID
    public let psk: Secret

    public init(id: PreSharedKeyID, psk: Secret) {
        self.id = id
        self.psk = psk
    }
}

extension KeySchedule {
    /// `psk_secret` (RFC 9420 §8.4), chaining every PSK in order:
    /// ```
    /// psk_extracted_[i] = KDF.Extract(0, psk_[i])
    /// psk_input_[i]     = ExpandWithLabel(psk_extracted_[i], "derived psk", PSKLabel, KDF.Nh)
    /// psk_secret_[0]    = 0
    /// psk_secret_[i]    = KDF.Extract(psk_input_[i-1], psk_secret_[i-1])
    /// ```
    /// with `PSKLabel { PreSharedKeyID id; uint16 index; uint16 count; }`. No PSKs gives the
    /// all-zero secret, the same as passing `nil` to the schedule.
    public static func pskSecret(_ cs: CipherSuiteProvider, psks: [PreSharedKeyInput]) throws -> Secret {
        guard psks.count <= Int(UInt16.max) else { throw MLSCryptoError.tooManyPreSharedKeys(psks.count) }
        let zero = Secret.zero(count: cs.kdfNh)
        var pskSecret = zero
        for (index, input) in psks.enumerated() {
            var label = TLSWriter()
            input.id.encode(to: &label)
            label.writeUInt16(UInt16(index))
            label.writeUInt16(UInt16(psks.count))
            let extracted = cs.kdfExtract(salt: zero, ikm: input.psk)
            let pskInput = try cs.expandWithLabel(extracted, label: "derived psk", context: label.bytes, length: cs.kdfNh)
            pskSecret = cs.kdfExtract(salt: pskInput, ikm: pskSecret)
        }
        return pskSecret
    }
}
