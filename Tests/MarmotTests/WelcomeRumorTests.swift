import Foundation
import MLS
import Nostr
import TestSupport
import XCTest
@testable import Marmot

/// Kind-444 Welcome rumors: MDK's exact output and MDK 0.8.0's receiver rules.
final class WelcomeRumorTests: XCTestCase {
    func testMDKSampleVerifies() throws {
        let rumor = try TestData.sampleWelcomeRumor()
        let verified = try WelcomeRumor.verify(rumor)
        let kpEvent = try TestData.sampleKeyPackageEvent()
        XCTAssertEqual(verified.keyPackageEventID, kpEvent.id)
        XCTAssertEqual(verified.relays.map(\.string), ["wss://relay.example.com"])
        XCTAssertEqual(verified.inviter, rumor.pubkey)
        XCTAssertEqual(verified.message.wireFormat, .welcome)
        XCTAssertEqual(verified.welcome.cipherSuite, .mls128DHKEMX25519AES128GCMSHA256Ed25519)
        // The Welcome is addressed to the sample KeyPackage, by its KeyPackageRef.
        let kp = try KeyPackageEvent.verify(kpEvent, now: kpEvent.createdAt)
        XCTAssertEqual(verified.welcome.secrets.map(\.newMember), [kp.reference])
    }

    /// Building from the sample's own parts reproduces MDK's rumor, id included.
    func testBuilderReproducesMDKRumor() throws {
        let rumor = try TestData.sampleWelcomeRumor()
        let verified = try WelcomeRumor.verify(rumor)
        let rebuilt = try WelcomeRumor.build(welcome: verified.message, keyPackageEventID: verified.keyPackageEventID,
                                             relays: verified.relays, committer: rumor.pubkey, createdAt: rumor.createdAt,
                                             client: "MDK/0.8.0")
        XCTAssertEqual(rebuilt, rumor)
        XCTAssertEqual(rebuilt.jsonString, try TestData.text("marmot-samples/welcome_rumor.json"))

        let ours = try WelcomeRumor.build(welcome: verified.message, keyPackageEventID: verified.keyPackageEventID,
                                          relays: [try RelayURL("wss://a.example"), try RelayURL("wss://b.example")],
                                          committer: rumor.pubkey, createdAt: 5)
        XCTAssertEqual(ours.tags, [["relays", "wss://a.example", "wss://b.example"], ["e", verified.keyPackageEventID.hex],
                                   ["client", MarmotTag.defaultClient], ["encoding", "base64"]])
        XCTAssertEqual(try WelcomeRumor.verify(ours).welcome, verified.welcome)
        let kpMessage = MLSMessage(body: .keyPackage(try KeyPackage(tlsSerialized: StrictBase64.decode(
            try TestData.sampleKeyPackageEvent().content, field: "c"))))
        XCTAssertThrowsMarmot(.exactly(.welcomeNotWelcome(wireFormat: 5)),
                              try WelcomeRumor.build(welcome: kpMessage, keyPackageEventID: verified.keyPackageEventID,
                                                     relays: [], committer: rumor.pubkey, createdAt: 5))
    }

    /// The nostrc capture's Welcome (its rumor body only) names Bob's KeyPackageRef.
    func testProtocolVectorWelcome() throws {
        let lifecycle = try XCTUnwrap(try TestData.protocolVectors()["group_lifecycle"] as? [String: Any])
        let steps = try XCTUnwrap(lifecycle["steps"] as? [[String: Any]])
        let alice = try PublicKey(hex: try XCTUnwrap(lifecycle["alice_pubkey"] as? String))
        let rumor = try Rumor(pubkey: alice, createdAt: 1_776_300_000, kind: try XCTUnwrap(steps[1]["event_kind"] as? Int),
                              tags: try XCTUnwrap(steps[1]["event_tags"] as? [[String]]),
                              content: try XCTUnwrap(steps[1]["event_content"] as? String))
        let verified = try WelcomeRumor.verify(rumor)
        XCTAssertEqual(verified.keyPackageEventID.hex, "01d173dfcffc96393b3e0d3016695924f4524bd5afde963a3867ebc8c487a864")
        let bob = try KeyPackageEvent.check(kind: 30443, author: try PublicKey(hex: try XCTUnwrap(lifecycle["bob_pubkey"] as? String)),
                                            tags: try XCTUnwrap(steps[0]["event_tags"] as? [[String]]),
                                            content: try XCTUnwrap(steps[0]["event_content"] as? String), now: 1_780_000_000)
        XCTAssertEqual(verified.welcome.secrets.count, 1)
        XCTAssertNotNil(verified.welcome.secrets(for: bob.keyPackage.reference))
    }

    // MARK: Rules

    private func mutated(kind: Int = 444, content: String? = nil, _ edit: (inout [[String]]) -> Void = { _ in }) throws -> Rumor {
        let sample = try TestData.sampleWelcomeRumor()
        var tags = sample.tags
        edit(&tags)
        return try Rumor(pubkey: sample.pubkey, createdAt: sample.createdAt, kind: kind, tags: tags, content: content ?? sample.content)
    }

    /// (name, edit, the error Burrow gives, whether MDK's validate_welcome_event rejects it).
    private func tagCases() throws -> [(String, Rumor, MarmotErrorMatcher?, Bool)] {
        let sample = try TestData.sampleWelcomeRumor()
        let e = try XCTUnwrap(sample.firstTagValue("e"))
        return [
            ("valid", try mutated(), nil, false),
            ("reversed", try mutated { $0.reverse() }, nil, false),
            ("extra tags", try mutated { $0 += [["p", e], ["relays"]] }, nil, false),
            ("no client", try mutated { $0.removeAll { $0[0] == "client" }; $0.append(["x"]) }, nil, false),
            ("kind 445", try mutated(kind: 445), .exactly(.wrongKind(expected: [444], actual: 445)), true),
            ("three tags", try mutated { $0.removeAll { $0[0] == "client" } }, nil, false),
            ("two tags", try mutated { $0 = Array($0.prefix(2)) }, .exactly(.welcomeTooFewTags(2)), true),
            ("no relays", try mutated { $0[0] = ["x"] }, .exactly(.missingTag("relays")), true),
            ("empty relays", try mutated { $0[0] = ["relays"] }, .exactly(.missingTag("relays")), true),
            ("bad relay", try mutated { $0[0] = ["relays", "wss://ok.example", "http://no.example"] }, .invalidRelayURL(), true),
            ("no e", try mutated { $0[1] = ["x"] }, .exactly(.missingTag("e")), true),
            ("empty e", try mutated { $0[1] = ["e", ""] }, .exactly(.missingTag("e")), true),
            ("bare e", try mutated { $0[1] = ["e"] }, .exactly(.missingTag("e")), true),
            ("second e", try mutated { $0.insert(["e", ""], at: 0) }, nil, false),
            ("upper e", try mutated { $0[1] = ["e", e.uppercased()] }, nil, false),
            ("empty client", try mutated { $0[2] = ["client", ""] }, .invalidTag("client"), true),
            ("bare client", try mutated { $0[2] = ["client"] }, .invalidTag("client"), true),
            ("encoding hex", try mutated { $0[3] = ["encoding", "hex"] }, .invalidTag("encoding"), true),
            ("encoding BASE64", try mutated { $0[3] = ["encoding", "BASE64"] }, .invalidTag("encoding"), true),
            ("extra encoding", try mutated { $0.append(["encoding", "hex"]) }, .invalidTag("encoding"), true),
            ("no encoding", try mutated { $0[3] = ["x"] }, .exactly(.missingTag("encoding")), true),
        ]
    }

    func testEachRule() throws {
        for (name, rumor, expected, _) in try tagCases() {
            if let expected {
                XCTAssertThrowsMarmot(expected, try WelcomeRumor.verify(rumor))
            } else {
                XCTAssertNoThrow(try WelcomeRumor.verify(rumor), name)
            }
        }
        // Burrow needs the `e` value to be an event id (MDK only wants it non-empty).
        XCTAssertThrowsMarmot(.invalidTag("e"), try WelcomeRumor.verify(try mutated { $0[1] = ["e", "kp-1"] }))
    }

    func testContentRules() throws {
        let sample = try TestData.sampleWelcomeRumor()
        let bytes = try StrictBase64.decode(sample.content, field: "content")
        XCTAssertThrowsMarmot(.exactly(.invalidBase64(field: "content")), try WelcomeRumor.verify(try mutated(content: "AAEAAw")))
        XCTAssertThrowsMarmot(.exactly(.welcomeDecoding(.trailingBytes(2))),
                              try WelcomeRumor.verify(try mutated(content: StrictBase64.encode(bytes + [0, 0]))))
        XCTAssertThrowsMarmot(.matching("decoding") { if case .welcomeDecoding = $0 { return true } else { return false } },
                              try WelcomeRumor.verify(try mutated(content: StrictBase64.encode(Array(bytes.prefix(40))))))
        // The raw Welcome without its MLSMessage header is not accepted.
        XCTAssertThrowsMarmot(.matching("decoding") { if case .welcomeDecoding = $0 { return true } else { return false } },
                              try WelcomeRumor.verify(try mutated(content: StrictBase64.encode(Array(bytes.dropFirst(4))))))
        let kpContent = try TestData.sampleKeyPackageEvent().content
        let kpMessage = [0x00, 0x01, 0x00, 0x05] + (try StrictBase64.decode(kpContent, field: "c"))
        XCTAssertThrowsMarmot(.exactly(.welcomeNotWelcome(wireFormat: 5)), try WelcomeRumor.verify(try mutated(content: StrictBase64.encode(kpMessage))))
    }

    /// MDK's own `process_welcome` classifies each tag case the same way: a rumor Burrow rejects
    /// on its tags is "invalid welcome message" there; one Burrow accepts gets past MDK's tag
    /// checks (and then fails only because the Welcome is not for this MDK instance).
    func testTagVerdictsMatchMDK() throws {
        let cases = try tagCases()
        let script = #"""
        import json, os, sys, tempfile
        import mdk
        out = []
        with tempfile.TemporaryDirectory() as d:
            m = mdk.new_mdk_with_key(os.path.join(d, "mdk.db"), os.urandom(32), None)
            for rumor in json.load(sys.stdin):
                try:
                    m.process_welcome(os.urandom(32).hex(), rumor)
                    out.append("accepted")
                except Exception as err:
                    out.append(str(err))
        print(json.dumps(out))
        """#
        let raw = try VenvPython.run(script, input: cases.map { $0.1.jsonString })
        let results = try XCTUnwrap(raw as? [String])
        XCTAssertEqual(results.count, cases.count)
        for ((name, rumor, _, mdkRejectsTags), result) in zip(cases, results) {
            let mdkTagError = result.contains("invalid welcome message")
            XCTAssertEqual(mdkTagError, mdkRejectsTags, "\(name): MDK said \(result)")
            let ours: Bool
            do { _ = try WelcomeRumor.verify(rumor); ours = false } catch { ours = true }
            XCTAssertEqual(ours, mdkTagError, name)
        }
    }
}
