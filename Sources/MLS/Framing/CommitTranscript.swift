/// The transcript hashes a commit moves forward (RFC 9420 §8.2), taken from its
/// AuthenticatedContent. A receiver computes the confirmed hash, runs the key schedule for the
/// new epoch, checks the confirmation tag with the new confirmation key, then computes the
/// interim hash; a committer computes the tag in between and sets `auth.confirmationTag`.
extension AuthenticatedContent {
    /// `confirmed_transcript_hash_[n] = Hash(interim_transcript_hash_[n-1] || ConfirmedTranscriptHashInput_[n])`.
    /// Throws `senderNotAllowed` unless the content is a commit.
    public func confirmedTranscriptHash(_ cs: CipherSuiteProvider, interimTranscriptHash: [UInt8]) throws -> [UInt8] {
        guard content.contentType == .commit else {
            throw MLSError.senderNotAllowed("only a commit moves the transcript hashes forward")
        }
        return TranscriptHash.confirmed(cs, interimTranscriptHash: interimTranscriptHash,
                                        confirmedTranscriptHashInput: confirmedTranscriptHashInput)
    }

    /// `interim_transcript_hash_[n] = Hash(confirmed_transcript_hash_[n] || InterimTranscriptHashInput_[n])`,
    /// where the input is the commit's confirmation tag; throws `missingConfirmationTag`.
    public func interimTranscriptHash(_ cs: CipherSuiteProvider, confirmedTranscriptHash: [UInt8]) throws -> [UInt8] {
        guard content.contentType == .commit, let tag = auth.confirmationTag else { throw MLSError.missingConfirmationTag }
        return TranscriptHash.interim(cs, confirmedTranscriptHash: confirmedTranscriptHash, confirmationTag: tag)
    }

    /// Checks the commit's confirmation tag, `MAC(confirmation_key, confirmed_transcript_hash)`, in
    /// constant time; throws `missingConfirmationTag` or `invalidConfirmationTag`.
    public func verifyConfirmationTag(_ cs: CipherSuiteProvider, confirmationKey: Secret, confirmedTranscriptHash: [UInt8]) throws {
        guard content.contentType == .commit, let tag = auth.confirmationTag else { throw MLSError.missingConfirmationTag }
        guard cs.verifyMAC(key: confirmationKey, data: confirmedTranscriptHash, mac: tag) else {
            throw MLSError.invalidConfirmationTag
        }
    }
}
