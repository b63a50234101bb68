import Foundation

/// The running node's answer to a `ControlRequest`: what the command would have printed and
/// its exit status, which the forwarding command prints and exits with unchanged.
public struct ControlResponse: Equatable, Sendable {
    public var exitCode: Int32
    public var stdout: String
    public var stderr: String

    public init(exitCode: Int32, stdout: String, stderr: String) {
        self.exitCode = exitCode
        self.stdout = stdout
        self.stderr = stderr
    }

    /// The response as one length-prefixed frame; `frameTooLarge` beyond
    /// `ControlFrame.maximumResponsePayloadCount`.
    public func encodedFrame() throws -> [UInt8] {
        try ControlFrame.encode(ControlJSON.encode(Wire(self)), limit: ControlFrame.maximumResponsePayloadCount)
    }

    /// Decodes exactly one response frame (typed `frame…` errors for anything else).
    public init(frame: [UInt8]) throws {
        try self.init(payload: ControlFrame.decode(frame, limit: ControlFrame.maximumResponsePayloadCount))
    }

    /// Decodes a frame's payload: `{"version":1,"exit_code":N,"stdout":"…","stderr":"…"}`.
    init(payload: [UInt8]) throws {
        let wire = try ControlJSON.decode(Wire.self, from: payload, what: "response")
        self.init(exitCode: wire.exitCode, stdout: wire.stdout, stderr: wire.stderr)
    }

    private struct Wire: Codable {
        var exitCode: Int32
        var stdout: String
        var stderr: String

        static let keys: Set<String> = ["version", "exit_code", "stdout", "stderr"]

        init(_ response: ControlResponse) {
            exitCode = response.exitCode
            stdout = response.stdout
            stderr = response.stderr
        }

        init(from decoder: Decoder) throws {
            let c = try ControlJSON.object(decoder, what: "response", keys: Self.keys)
            exitCode = try c.decode(Int32.self, forKey: .init("exit_code"))
            stdout = try c.decode(String.self, forKey: .init("stdout"))
            stderr = try c.decode(String.self, forKey: .init("stderr"))
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: ControlJSON.Key.self)
            try c.encode(ControlJSON.version, forKey: .init("version"))
            try c.encode(exitCode, forKey: .init("exit_code"))
            try c.encode(stdout, forKey: .init("stdout"))
            try c.encode(stderr, forKey: .init("stderr"))
        }
    }
}

/// Output a forwarded command sends while it runs, before its `ControlResponse`:
/// `{"version":1,"progress":"…"}` (stdout text, printed by the caller as it arrives).
public struct ControlProgress: Equatable, Sendable {
    public var text: String

    public init(text: String) { self.text = text }

    public func encodedFrame() throws -> [UInt8] {
        try ControlFrame.encode(ControlJSON.encode(Wire(text: text)), limit: ControlFrame.maximumResponsePayloadCount)
    }

    init(payload: [UInt8]) throws {
        text = try ControlJSON.decode(Wire.self, from: payload, what: "progress frame").text
    }

    private struct Wire: Codable {
        var text: String

        init(text: String) { self.text = text }

        init(from decoder: Decoder) throws {
            let c = try ControlJSON.object(decoder, what: "progress frame", keys: ["version", "progress"])
            text = try c.decode(String.self, forKey: .init("progress"))
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: ControlJSON.Key.self)
            try c.encode(ControlJSON.version, forKey: .init("version"))
            try c.encode(text, forKey: .init("progress"))
        }
    }
}

/// One frame the server sends: progress, or the final answer.
enum ControlAnswerFrame {
    case progress(ControlProgress)
    case response(ControlResponse)

    /// A payload with a `progress` field is progress; anything else must be a response (and is
    /// refused as one when it is not).
    init(payload: [UInt8]) throws {
        if let object = try? JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any], object["progress"] != nil {
            self = .progress(try ControlProgress(payload: payload))
        } else {
            self = .response(try ControlResponse(payload: payload))
        }
    }
}
