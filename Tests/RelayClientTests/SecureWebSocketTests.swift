import NIOSSL
import Nostr
import TestSupport
import XCTest
@testable import RelayClient

/// wss:// through NIOSSL, against a TLS server with a throwaway self-signed certificate (the
/// shape of a family's self-hosted relay): trusted when configured, refused otherwise.
final class SecureWebSocketTests: XCTestCase {
    func testWSSConnectsWhenTheCertificateIsTrusted() async throws {
        try await bounded(60) {
            let server = try await HostileServer(
                steps: [["await": "REQ"], ["text": "[\"EOSE\",\"%SUB%\"]"], ["text": "[\"NOTICE\",\"over tls\"]"]], tls: true)
            defer { server.stop() }
            XCTAssertTrue(server.url.hasPrefix("wss://localhost:"))
            guard let certificatePath = server.certificatePath else { return XCTFail("no certificate printed") }

            var configuration = RelayConfiguration.forTests
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(certificatePath))
            configuration.tlsConfiguration = tls
            try await withPool([server.url], configuration: configuration) { pool in
                let probe = StreamProbe(pool.subscribe([Filter(kinds: [1])]))
                try await probe.wait("EOSE and the notice over TLS") { items in
                    items.contains { $0.isEOSEAll } && items.contains { if case .notice(_, "over tls") = $0 { return true } else { return false } }
                }
                probe.stop()
            }

            // With the system's trust roots the self-signed certificate is refused: a typed error.
            try await withPool([server.url]) { pool in
                let results = await pool.publish(try TestEvents.sign(keys: TestEvents.keys()), timeout: .seconds(5))
                guard case .tlsFailed(let why) = results.first?.error else { return XCTFail("\(results)") }
                XCTAssertFalse(why.isEmpty)
            }
        }
    }
}
