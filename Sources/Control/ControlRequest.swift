import Foundation

/// A command handed to the running node: its command line and the passphrase it was given,
/// which the node checks as a direct `open` would before running anything.
///
/// The passphrase never appears in a description, a debug description, a mirror or an error.
public struct ControlRequest: Sendable {
    /// The command line after global-option hoisting, without the program name.
    public var args: [String]
    /// The passphrase the command was given (possibly empty). Secret.
    public var passphrase: [UInt8]
    /// What the command reads from standard input (`--code-stdin`, `contact add -`), read by
    /// the forwarding process: the running node's own stdin is not the caller's. May be secret.
    public var stdin: [UInt8]?
    /// Set by the server for the handler: sends a line of output to the caller at once (a
    /// nearby invite's code cannot wait for the command to end). Not part of the wire.
    public var progress: (@Sendable (String) -> Void)?

    public init(args: [String], passphrase: [UInt8], stdin: [UInt8]? = nil) {
        self.args = args
        self.passphrase = passphrase
        self.stdin = stdin
    }

    /// The request as one length-prefixed frame; `frameTooLarge` beyond
    /// `ControlFrame.maximumRequestPayloadCount`.
    public func encodedFrame() throws -> [UInt8] {
        try ControlFrame.encode(ControlJSON.encode(Wire(self)), limit: ControlFrame.maximumRequestPayloadCount)
    }

    /// Decodes exactly one request frame (typed `frame…` errors for anything else).
    public init(frame: [UInt8]) throws {
        try self.init(payload: ControlFrame.decode(frame, limit: ControlFrame.maximumRequestPayloadCount))
    }

    /// Decodes a frame's payload: `{"version":1,"args":[…],"passphrase":"<base64>"}`, nothing more.
    init(payload: [UInt8]) throws {
        let wire = try ControlJSON.decode(Wire.self, from: payload, what: "request")
        self.init(args: wire.args, passphrase: wire.passphrase, stdin: wire.stdin)
    }

    private struct Wire: Codable {
        var args: [String]
        var passphrase: [UInt8]
        var stdin: [UInt8]?

        static let keys: Set<String> = ["version", "args", "passphrase"]

        init(_ request: ControlRequest) {
            args = request.args
            passphrase = request.passphrase
            stdin = request.stdin
        }

        init(from decoder: Decoder) throws {
            let c = try ControlJSON.object(decoder, what: "request", keys: Self.keys, optional: ["stdin"])
            args = try c.decode([String].self, forKey: .init("args"))
            passphrase = try Self.base64(c, "passphrase")
            stdin = c.contains(.init("stdin")) ? try Self.base64(c, "stdin") : nil
        }

        private static func base64(_ c: KeyedDecodingContainer<ControlJSON.Key>, _ field: String) throws -> [UInt8] {
            let encoded = try c.decode(String.self, forKey: .init(field))
            guard let bytes = Data(base64Encoded: encoded) else {
                throw ControlError.frameMalformed("the field \"\(field)\" of the request is not base64")
            }
            return Array(bytes)
        }

        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: ControlJSON.Key.self)
            try c.encode(ControlJSON.version, forKey: .init("version"))
            try c.encode(args, forKey: .init("args"))
            try c.encode(Data(passphrase).base64EncodedString(), forKey: .init("passphrase"))
            if let stdin { try c.encode(Data(stdin).base64EncodedString(), forKey: .init("stdin")) }
        }
    }
}

extension ControlRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    public var description: String {
        "ControlRequest(args: \(args), passphrase: \(passphrase.isEmpty ? "none" : "redacted")\(stdin == nil ? "" : ", stdin: redacted"))"
    }
    public var debugDescription: String { description }
    /// Shows the arguments only, so `dump` and debuggers never print the passphrase.
    public var customMirror: Mirror { Mirror(self, children: ["args": args], displayStyle: .struct) }
}
