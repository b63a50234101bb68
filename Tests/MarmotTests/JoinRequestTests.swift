import Foundation
import Marmot
import MLS
import Nostr
import TestSupport
import XCTest

/// Whistle's kind-1080 join request: the object's codec, the rumor's checks after a NIP-59
/// unwrap, and the invite deep link.
final class JoinRequestTests: XCTestCase {
    let now: Int64 = 1_800_000_000
    let groupID = String(repeating: "ab", count: 32)

    /// A MIP-00 KeyPackage event (kind 30443) by `keys`.
    func keyPackageEvent(_ keys: Keys, rng: inout SplitMix64) throws -> Event {
        let kp = try TestData.marmotKeyPackage(identity: keys.publicKey.bytes, now: now, rng: &rng)
        return try KeyPackageEventContent(keyPackage: kp, relays: [try RelayURL("wss://relay.one")], using: &rng)
            .sign(keys: keys, createdAt: now, rng: &rng).event
    }

    /// `rumor` sealed by `sender` and wrapped to `inviter`, then unwrapped as the inviter does.
    func delivered(_ rumor: Rumor, sender: Keys, inviter: Keys, rng: inout SplitMix64) throws -> UnwrappedGift {
        let wrap = try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: inviter.publicKey, now: now, rng: &rng)
        return try GiftWrap.unwrap(wrap, recipient: inviter)
    }

    func object(_ members: [(String, JSONValue)]) -> [UInt8] {
        JSONValue.object(members.map { JSONMember($0.0, $0.1) }).jsonBytes
    }

    func assertRefused(_ expected: JoinRequestError, _ body: () throws(JoinRequestError) -> Void,
                       file: StaticString = #filePath, line: UInt = #line) {
        do {
            try body()
            XCTFail("expected \(expected), got no error", file: file, line: line)
        } catch {
            XCTAssertEqual(error, expected, file: file, line: line)
        }
    }

    func testValidRequestTravelsInAGiftWrapAndVerifies() throws {
        var rng = SplitMix64(seed: 1080)
        let bob = Keys.generate(using: &rng)
        let alice = Keys.generate(using: &rng)
        let kp = try keyPackageEvent(bob, rng: &rng)
        let request = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: kp, name: "Bob")

        // Whistle's member order, name last and only when given.
        let text = String(decoding: request.json, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix(#"{"type":"join-request","v":1,"groupId":"\#(groupID)","pubkey":"\#(bob.publicKey.hex)","keyPackage":"#), text)
        XCTAssertTrue(text.hasSuffix(#","name":"Bob"}"#), text)
        XCTAssertFalse(String(decoding: JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: kp, name: nil).json, as: UTF8.self)
            .contains("name"))
        XCTAssertEqual(try JoinRequest.decode(request.json), request)

        let rumor = try JoinRequestRumor.build(request, createdAt: now)
        XCTAssertEqual(rumor.kind, 1080)
        XCTAssertEqual(rumor.pubkey, bob.publicKey)
        XCTAssertEqual(rumor.tags, [])
        let verified = try JoinRequestRumor.open(try delivered(rumor, sender: bob, inviter: alice, rng: &rng), now: now)
        XCTAssertEqual(verified.id, rumor.id)
        XCTAssertEqual(verified.request, request)
        XCTAssertEqual(verified.requester, bob.publicKey)
        XCTAssertEqual(verified.mlsGroupID, try Hex.decode(groupID))
        XCTAssertEqual(verified.keyPackage.identity, bob.publicKey)
        XCTAssertEqual(verified.keyPackage.event, kp)

        // Upper-case hex names the same group.
        XCTAssertNoThrow(try request.require(groupID: groupID.uppercased()))
    }

    func testRequestOnAnotherKeysBehalfIsRefused() throws {
        var rng = SplitMix64(seed: 1081)
        let bob = Keys.generate(using: &rng)
        let mallory = Keys.generate(using: &rng)
        let alice = Keys.generate(using: &rng)

        // Mallory seals a rumor naming Bob as joiner, with Bob's own KeyPackage (public, so
        // anyone can copy it): the request's pubkey is not the sealer.
        let bobsRequest = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: try keyPackageEvent(bob, rng: &rng), name: nil)
        let rumor = try Rumor(pubkey: mallory.publicKey, createdAt: now, kind: 1080, content: String(decoding: bobsRequest.json, as: UTF8.self))
        let gift = try delivered(rumor, sender: mallory, inviter: alice, rng: &rng)
        assertRefused(.authorMismatch) { () throws(JoinRequestError) in _ = try JoinRequestRumor.open(gift, now: now) }

        // A seal signed by Mallory over a rumor authored by Bob never unwraps.
        let bobsRumor = try JoinRequestRumor.build(bobsRequest, createdAt: now)
        let key = try NIP44.conversationKey(secretKey: mallory.secretKey, publicKey: alice.publicKey)
        let seal = try Event.sign(kind: Kind.seal, content: try NIP44.encrypt(plaintext: bobsRumor.jsonString, conversationKey: key, using: &rng),
                                  createdAt: now, keys: mallory, rng: &rng)
        let forged = try GiftWrap.wrap(seal: seal, recipient: alice.publicKey, now: now, rng: &rng)
        XCTAssertThrowsError(try GiftWrap.unwrap(forged, recipient: alice)) { error in
            XCTAssertEqual(error as? NostrError, .sealAuthorMismatch)
        }
    }

    func testKeyPackageByAnotherKeyOrOfAnotherKindIsRefused() throws {
        var rng = SplitMix64(seed: 1082)
        let bob = Keys.generate(using: &rng)
        let carol = Keys.generate(using: &rng)
        func request(keyPackage: Event) -> [UInt8] {
            object([("type", .string("join-request")), ("v", .integer(1)), ("groupId", .string(groupID)),
                    ("pubkey", .string(bob.publicKey.hex)), ("keyPackage", .string(keyPackage.jsonString))])
        }
        let carols = try keyPackageEvent(carol, rng: &rng)
        assertRefused(.keyPackageInvalid("signed by another key than the request's pubkey")) { () throws(JoinRequestError) in
            _ = try JoinRequest.decode(request(keyPackage: carols))
        }
        let note = try Event.sign(kind: 1, content: "hello", createdAt: now, keys: bob, rng: &rng)
        assertRefused(.keyPackageInvalid("kind 1 is not a KeyPackage")) { () throws(JoinRequestError) in
            _ = try JoinRequest.decode(request(keyPackage: note))
        }
        // A KeyPackage event whose signature does not verify (content changed after signing).
        let good = try keyPackageEvent(bob, rng: &rng)
        let tampered = good.jsonString.replacingOccurrences(of: #""content":""#, with: #""content":"AAAA"#)
        let tamperedRequest = object([("type", .string("join-request")), ("v", .integer(1)), ("groupId", .string(groupID)),
                                      ("pubkey", .string(bob.publicKey.hex)), ("keyPackage", .string(tampered))])
        XCTAssertThrowsError(try JoinRequest.decode(tamperedRequest)) { error in
            guard case .keyPackageInvalid? = error as? JoinRequestError else { return XCTFail("\(error)") }
        }
        assertRefused(.keyPackageInvalid("not an event")) { () throws(JoinRequestError) in
            _ = try JoinRequest.decode(self.object([("type", .string("join-request")), ("v", .integer(1)), ("groupId", .string(self.groupID)),
                                                    ("pubkey", .string(bob.publicKey.hex)), ("keyPackage", .string("{}"))]))
        }
    }

    /// The envelope holds (a 30443 signed by the joiner) but the package breaks MIP-00: the
    /// mesh would carry it, the relay path refuses it on receipt.
    func testKeyPackageBreakingMIP00IsRefusedOnOpen() throws {
        var rng = SplitMix64(seed: 1083)
        let bob = Keys.generate(using: &rng)
        let alice = Keys.generate(using: &rng)
        let fake = try Event.sign(kind: 30443, content: "kp", tags: [["d", "0"]], createdAt: now, keys: bob, rng: &rng)
        let request = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: fake, name: nil)
        XCTAssertEqual(try JoinRequest.decode(request.json), request)
        let gift = try delivered(try JoinRequestRumor.build(request, createdAt: now), sender: bob, inviter: alice, rng: &rng)
        XCTAssertThrowsError(try JoinRequestRumor.open(gift, now: now)) { error in
            guard case .keyPackageInvalid? = error as? JoinRequestError else { return XCTFail("\(error)") }
        }
        // An expired package: valid when made, refused 200 days later.
        let real = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: try keyPackageEvent(bob, rng: &rng), name: nil)
        let later = try delivered(try JoinRequestRumor.build(real, createdAt: now), sender: bob, inviter: alice, rng: &rng)
        XCTAssertNoThrow(try JoinRequestRumor.open(later, now: now))
        XCTAssertThrowsError(try JoinRequestRumor.open(later, now: now + 200 * 86400)) { error in
            guard case .keyPackageInvalid? = error as? JoinRequestError else { return XCTFail("\(error)") }
        }
    }

    func testBadJSONAndMissingOrMistypedMembers() throws {
        var rng = SplitMix64(seed: 1084)
        let bob = Keys.generate(using: &rng)
        let kp = try keyPackageEvent(bob, rng: &rng).jsonString
        let full: [(String, JSONValue)] = [("type", .string("join-request")), ("v", .integer(1)), ("groupId", .string(groupID)),
                                           ("pubkey", .string(bob.publicKey.hex)), ("keyPackage", .string(kp))]
        XCTAssertNoThrow(try JoinRequest.decode(object(full)))

        for bytes in [Array("not json".utf8), Array("[]".utf8), Array("".utf8), Array(#"{"type":"join-request""#.utf8)] {
            assertRefused(.malformed("not a JSON object")) { () throws(JoinRequestError) in _ = try UnverifiedJoinRequest.decode(bytes) }
        }
        for member in ["type", "v", "groupId", "pubkey", "keyPackage"] {
            let missing = full.filter { $0.0 != member }
            assertRefused(.malformed(member)) { () throws(JoinRequestError) in _ = try UnverifiedJoinRequest.decode(self.object(missing)) }
            let mistyped = full.map { $0.0 == member ? ($0.0, JSONValue.array([])) : $0 }
            assertRefused(.malformed(member)) { () throws(JoinRequestError) in _ = try UnverifiedJoinRequest.decode(self.object(mistyped)) }
        }
        let otherType = full.map { $0.0 == "type" ? ($0.0, JSONValue.string("join-response")) : $0 }
        assertRefused(.malformed("type")) { () throws(JoinRequestError) in _ = try UnverifiedJoinRequest.decode(self.object(otherType)) }
        let version2 = full.map { $0.0 == "v" ? ($0.0, JSONValue.integer(2)) : $0 }
        assertRefused(.malformed("v")) { () throws(JoinRequestError) in _ = try UnverifiedJoinRequest.decode(self.object(version2)) }
        assertRefused(.malformed("name")) { () throws(JoinRequestError) in
            _ = try UnverifiedJoinRequest.decode(self.object(full + [("name", .integer(7))]))
        }
        XCTAssertNil(try UnverifiedJoinRequest.decode(object(full + [("name", .null)])).name)
        let badKey = full.map { $0.0 == "pubkey" ? ($0.0, JSONValue.string("npub-ish")) : $0 }
        assertRefused(.invalidPubkey) { () throws(JoinRequestError) in _ = try JoinRequest.decode(self.object(badKey)) }
    }

    func testGroupIDMismatchAndNonHexGroupID() throws {
        var rng = SplitMix64(seed: 1085)
        let bob = Keys.generate(using: &rng)
        let alice = Keys.generate(using: &rng)
        let kp = try keyPackageEvent(bob, rng: &rng)
        let request = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: kp, name: nil)
        assertRefused(.groupMismatch) { () throws(JoinRequestError) in try request.require(groupID: String(repeating: "cd", count: 32)) }

        for bad in ["", "zz", "abc"] {
            let odd = JoinRequest(groupID: bad, pubkey: bob.publicKey, keyPackage: kp, name: nil)
            let gift = try delivered(try JoinRequestRumor.build(odd, createdAt: now), sender: bob, inviter: alice, rng: &rng)
            assertRefused(.malformed("groupId")) { () throws(JoinRequestError) in _ = try JoinRequestRumor.open(gift, now: now) }
        }
    }

    func testOtherRumorKindsAreNotJoinRequests() throws {
        var rng = SplitMix64(seed: 1086)
        let bob = Keys.generate(using: &rng)
        let alice = Keys.generate(using: &rng)
        let request = JoinRequest(groupID: groupID, pubkey: bob.publicKey, keyPackage: try keyPackageEvent(bob, rng: &rng), name: nil)
        let rumor = try Rumor(pubkey: bob.publicKey, createdAt: now, kind: 444, content: String(decoding: request.json, as: UTF8.self))
        let gift = try delivered(rumor, sender: bob, inviter: alice, rng: &rng)
        assertRefused(.wrongKind(444)) { () throws(JoinRequestError) in _ = try JoinRequestRumor.open(gift, now: now) }
    }

    func testWhistleInviteLink() throws {
        var rng = SplitMix64(seed: 1087)
        let alice = Keys.generate(using: &rng)
        let link = WhistleInviteLink(relay: try RelayURL("wss://relay.damus.io"), inviter: alice.publicKey, groupID: groupID)
        XCTAssertTrue(link.url.hasPrefix("whistle://invite/"))
        XCTAssertEqual(try WhistleInviteLink.parse(link.url), link)
        XCTAssertEqual(try WhistleInviteLink.parse("  " + link.url + "\n"), link)

        // URL-safe base64 without padding, a hex inviter, no relay, upper-case group id.
        let json = #"{"relay":"","inviterNpub":"\#(alice.publicKey.hex)","groupId":"\#(groupID.uppercased())"}"#
        let urlSafe = Data(json.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
        let parsed = try WhistleInviteLink.parse("whistle://invite/" + urlSafe)
        XCTAssertEqual(parsed, WhistleInviteLink(relay: nil, inviter: alice.publicKey, groupID: groupID))
        let escaped = "whistle://invite/" + Data(json.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "%3D")
        XCTAssertEqual(try WhistleInviteLink.parse(escaped), parsed)

        func payload(_ text: String) -> String { "whistle://invite/" + Data(text.utf8).base64EncodedString() }
        assertRefused(.malformed("not a whistle://invite/ link")) { () throws(JoinRequestError) in _ = try WhistleInviteLink.parse(self.groupID) }
        assertRefused(.malformed("the link's payload is not base64 JSON")) { () throws(JoinRequestError) in
            _ = try WhistleInviteLink.parse("whistle://invite/%%%")
        }
        assertRefused(.malformed("inviterNpub")) { () throws(JoinRequestError) in
            _ = try WhistleInviteLink.parse(payload(#"{"groupId":"\#(self.groupID)"}"#))
        }
        assertRefused(.malformed("inviterNpub")) { () throws(JoinRequestError) in
            _ = try WhistleInviteLink.parse(payload(#"{"inviterNpub":"npub1xyz","groupId":"\#(self.groupID)"}"#))
        }
        assertRefused(.malformed("groupId")) { () throws(JoinRequestError) in
            _ = try WhistleInviteLink.parse(payload(#"{"inviterNpub":"\#(alice.publicKey.npub)","groupId":"not hex"}"#))
        }
        assertRefused(.malformed("relay")) { () throws(JoinRequestError) in
            _ = try WhistleInviteLink.parse(payload(#"{"relay":"http://x","inviterNpub":"\#(alice.publicKey.npub)","groupId":"ab"}"#))
        }
    }
}
