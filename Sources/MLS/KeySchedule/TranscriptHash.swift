/// The transcript hashes of RFC 9420 §8.2, which bind each epoch to the commits before it.
///
/// ```
/// confirmed_transcript_hash_[n] = Hash(interim_transcript_hash_[n-1] || ConfirmedTranscriptHashInput_[n])
/// interim_transcript_hash_[n]   = Hash(confirmed_transcript_hash_[n] || InterimTranscriptHashInput_[n])
/// ```
/// `ConfirmedTranscriptHashInput` (wire_format, FramedContent, signature) is encoded by
/// `AuthenticatedContent.confirmedTranscriptHashInput`; `InterimTranscriptHashInput` is the
/// commit's `MAC confirmation_tag<V>`. A new group starts with an empty confirmed hash and the
/// interim hash computed from it and the epoch-0 confirmation tag.
public enum TranscriptHash {
    public static func confirmed(_ cs: CipherSuiteProvider, interimTranscriptHash: [UInt8],
                                 confirmedTranscriptHashInput: [UInt8]) -> [UInt8] {
        cs.hash(interimTranscriptHash + confirmedTranscriptHashInput)
    }

    public static func interim(_ cs: CipherSuiteProvider, confirmedTranscriptHash: [UInt8], confirmationTag: [UInt8]) -> [UInt8] {
        var writer = TLSWriter(capacity: confirmedTranscriptHash.count + confirmationTag.count + 2)
        writer.writeRaw(confirmedTranscriptHash)
        writer.writeOpaque(confirmationTag)
        return cs.hash(writer.bytes)
    }
}
