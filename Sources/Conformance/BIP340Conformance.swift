import Nostr

/// Runs the BIP-340 reference vectors (bitcoin/bips `bip-0340/test-vectors.csv`) through
/// Burrow's `Keys.sign`/`Schnorr.verify`. Every data row is one case; a row that cannot be
/// parsed counts as failed.
public enum BIP340Conformance {
    public static func run(csv: String) -> ConformanceReport {
        var report = ConformanceReport()
        let lines = csv.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        for (lineNumber, line) in lines.enumerated() where lineNumber > 0 {
            if line.allSatisfy({ $0 == " " || $0 == "," }) { continue }
            let fields = line.split(separator: ",", maxSplits: 7, omittingEmptySubsequences: false).map(String.init)
            let name = "bip340 #\(fields.first ?? String(lineNumber))"
            report.record(name, Result { try runCase(fields) })
        }
        return report
    }

    private static func runCase(_ fields: [String]) throws {
        guard fields.count >= 7 else { throw CaseFailure("expected at least 7 columns, got \(fields.count)") }
        let secretHex = fields[1], publicHex = fields[2], auxHex = fields[3]
        let messageHex = fields[4], signatureHex = fields[5], expectedText = fields[6]
        let expected: Bool
        switch expectedText.uppercased() {
        case "TRUE": expected = true
        case "FALSE": expected = false
        default: throw CaseFailure("verification result column is neither TRUE nor FALSE")
        }
        guard let message = try? Hex.decode(messageHex),
              let signature = try? Hex.decode(signatureHex, length: 64)
        else { throw CaseFailure("message or signature column is not hex") }

        if !secretHex.isEmpty {
            let secret: SecretKey
            do { secret = try SecretKey(hex: secretHex) } catch { throw CaseFailure("secret key rejected: \(error)") }
            guard secret.publicKey.hex == publicHex.lowercased() else { throw CaseFailure("derived public key differs") }
            guard let aux = try? Hex.decode(auxHex, length: 32) else { throw CaseFailure("aux_rand is not 32 hex bytes") }
            let produced = try Keys(secretKey: secret).sign(message, auxRand: aux)
            guard produced == signature else { throw CaseFailure("signature differs from the vector") }
        }

        // A public key that is not a valid x coordinate cannot verify anything.
        let verified: Bool
        if let publicKey = try? PublicKey(hex: publicHex) {
            verified = Schnorr.verify(signature: signature, message: message, publicKey: publicKey)
        } else {
            verified = false
        }
        guard verified == expected else {
            throw CaseFailure("verification gave \(verified), expected \(expected)")
        }
    }
}

/// A conformance case that did not produce the vector's answer (never holds secret values).
struct CaseFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
