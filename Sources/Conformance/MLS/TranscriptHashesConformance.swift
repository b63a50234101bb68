import MLS

/// mlswg `transcript-hashes.json`: from a commit's AuthenticatedContent and the interim
/// transcript hash before it, the confirmed hash after it, its confirmation tag (checked with
/// `confirmation_key`), and the interim hash after it.
enum TranscriptHashesConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "transcript-hashes") { vector, cs, checker in
            let content = try AuthenticatedContent(tlsSerialized: try vector.bytes("authenticated_content"))
            guard case .commit = content.content.body else {
                throw ConformanceCaseError.malformed("authenticated_content does not hold a commit")
            }
            let confirmed = try content.confirmedTranscriptHash(cs, interimTranscriptHash: try vector.bytes("interim_transcript_hash_before"))
            checker.expect(confirmed == (try vector.bytes("confirmed_transcript_hash_after")), "confirmed_transcript_hash_after")
            checker.step("confirmation_tag") { _ in
                try content.verifyConfirmationTag(cs, confirmationKey: Secret(try vector.bytes("confirmation_key")),
                                                  confirmedTranscriptHash: confirmed)
            }
            let interim = try content.interimTranscriptHash(cs, confirmedTranscriptHash: confirmed)
            checker.expect(interim == (try vector.bytes("interim_transcript_hash_after")), "interim_transcript_hash_after")
        }
    }
}
