import Foundation
import Node

/// The JSON side of control frames: objects with exactly the expected keys (unknown or missing
/// keys are errors, so two builds that disagree on the shape say so instead of guessing), and
/// error messages that name the field but never quote a value, since a request holds a passphrase.
enum ControlJSON {
    /// The shape of requests and responses; a build that changes it bumps this.
    static let version = 1

    /// A string-valued coding key, so `allKeys` lists every key present, known or not.
    struct Key: CodingKey {
        let stringValue: String
        init(_ name: String) { stringValue = name }
        init?(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    /// The object's container after checking its keys are exactly `expected` and its version is ours.
    static func object(_ decoder: Decoder, what: String, keys expected: Set<String>, optional: Set<String> = []) throws
        -> KeyedDecodingContainer<Key>
    {
        let container = try decoder.container(keyedBy: Key.self)
        let present = Set(container.allKeys.map(\.stringValue)).subtracting(optional)
        if let unknown = present.subtracting(expected).sorted().first {
            throw ControlError.frameMalformed("the \(what) has an unknown field \"\(unknown)\"")
        }
        if let missing = expected.subtracting(present).sorted().first {
            throw ControlError.frameMalformed("the \(what) lacks the field \"\(missing)\"")
        }
        let version = try container.decode(Int.self, forKey: Key("version"))
        guard version == Self.version else {
            throw ControlError.frameMalformed("the \(what) has control protocol version \(version), this build speaks \(Self.version)")
        }
        return container
    }

    static func encode<T: Encodable>(_ value: T) throws -> [UInt8] {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Array(try encoder.encode(value))
        } catch {
            throw NodeError.internalError("a control message cannot be encoded as JSON")
        }
    }

    /// Decodes `payload`, turning every failure into `frameMalformed` that names at most
    /// the field involved (Foundation's own descriptions can quote the offending value).
    static func decode<T: Decodable>(_ type: T.Type, from payload: [UInt8], what: String) throws -> T {
        do {
            return try JSONDecoder().decode(type, from: Data(payload))
        } catch let error as ControlError {
            throw error
        } catch let error as DecodingError {
            throw ControlError.frameMalformed(explain(error, what: what))
        } catch {
            throw ControlError.frameMalformed("the \(what) cannot be decoded")
        }
    }

    private static func explain(_ error: DecodingError, what: String) -> String {
        func field(_ path: [CodingKey]) -> String {
            path.isEmpty ? "the \(what)" : "the field \"\(path.map(\.stringValue).joined(separator: "."))\" of the \(what)"
        }
        switch error {
        case .typeMismatch(_, let context): return "\(field(context.codingPath)) has the wrong type"
        case .valueNotFound(_, let context): return "\(field(context.codingPath)) is null"
        case .keyNotFound(let key, _): return "the \(what) lacks the field \"\(key.stringValue)\""
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "the \(what) is not UTF-8 JSON of the expected shape" : "\(field(context.codingPath)) is invalid"
        @unknown default: return "the \(what) cannot be decoded"
        }
    }
}
