/// The join-error codes of 10.4.
public enum JoinErrorCode: UInt8, Sendable, Hashable, CaseIterable {
    case inviteExpired = 1
    case wrongCode = 2
    case tooManyAttempts = 3
    case inviteClosed = 4
    case inviteBusy = 5
    case keyPackageInvalid = 6
    case joinRefused = 7
    case joinFailed = 8
    case welcomeTooLarge = 9

    public var error: MeshError {
        switch self {
        case .inviteExpired: return .inviteExpired
        case .wrongCode: return .wrongCode
        case .tooManyAttempts: return .tooManyAttempts
        case .inviteClosed: return .inviteClosed
        case .inviteBusy: return .inviteBusy
        case .keyPackageInvalid: return .keyPackageInvalid
        case .joinRefused: return .joinRefused
        case .joinFailed: return .joinFailed
        case .welcomeTooLarge: return .welcomeTooLarge
        }
    }
}

/// The join-done status of 10.4.
public enum JoinDoneStatus: UInt8, Sendable, Hashable {
    case accepted = 0
    case declined = 1
    case failed = 2
}

/// One invite exchange message (10.4), as framed on the air. Sealed parts stay sealed here;
/// the sessions open them with the attempt's keys. Every payload starts `invite_id ‖ nonce`.
public struct JoinMessage: Sendable, Hashable {
    public enum Body: Sendable, Hashable {
        case hello(yb: [UInt8])
        case challenge(ya: [UInt8], sealed: [UInt8])
        case request(sealed: [UInt8])
        case welcome(sealed: [UInt8])
        case done(status: UInt8, tag: [UInt8])
        case error(code: UInt8)
    }

    public let inviteID: [UInt8]
    public let nonce: [UInt8]
    public let body: Body

    public init(inviteID: [UInt8], nonce: [UInt8], body: Body) {
        self.inviteID = inviteID
        self.nonce = nonce
        self.body = body
    }

    public var type: PacketType {
        switch body {
        case .hello: return .joinHello
        case .challenge: return .joinChallenge
        case .request: return .joinRequest
        case .welcome: return .joinWelcome
        case .done: return .joinDone
        case .error: return .joinError
        }
    }

    /// Decodes the payload of a join packet of `type`; other sizes are `bad_payload`.
    public static func decode(type: PacketType, payload: [UInt8]) throws(MeshError) -> JoinMessage {
        guard payload.count >= 32 else { throw .badPayload }
        let inviteID = Array(payload[0..<16]), nonce = Array(payload[16..<32])
        let rest = Array(payload[32...])
        let body: Body
        switch type {
        case .joinHello:
            guard rest.count == 32 else { throw .badPayload }
            body = .hello(yb: rest)
        case .joinChallenge:
            guard rest.count >= 32 + 16 else { throw .badPayload }
            body = .challenge(ya: Array(rest[0..<32]), sealed: Array(rest[32...]))
        case .joinRequest:
            guard rest.count >= 16 else { throw .badPayload }
            body = .request(sealed: rest)
        case .joinWelcome:
            guard rest.count >= 16 else { throw .badPayload }
            body = .welcome(sealed: rest)
        case .joinDone:
            guard rest.count == 17, rest[0] <= JoinDoneStatus.failed.rawValue else { throw .badPayload }
            body = .done(status: rest[0], tag: Array(rest[1...]))
        case .joinError:
            guard rest.count == 1, JoinErrorCode(rawValue: rest[0]) != nil else { throw .badPayload }
            body = .error(code: rest[0])
        default:
            throw .badPayload
        }
        return JoinMessage(inviteID: inviteID, nonce: nonce, body: body)
    }

    public var payload: [UInt8] {
        var out = inviteID + nonce
        switch body {
        case .hello(let yb): out += yb
        case .challenge(let ya, let sealed): out += ya + sealed
        case .request(let sealed), .welcome(let sealed): out += sealed
        case .done(let status, let tag): out += [status] + tag
        case .error(let code): out.append(code)
        }
        return out
    }
}
