import Foundation

/// A fresh short home (`/tmp/bw-XXXXXX`, mode 0700): Unix socket paths are limited to 103 bytes.
public func makeShortHome() throws -> URL {
    var template = Array("/tmp/bw-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw POSIXFailure(call: "mkdtemp", errno: errno) }
    return URL(fileURLWithPath: String(cString: made), isDirectory: true)
}

public struct POSIXFailure: Error, CustomStringConvertible {
    public let call: String
    public let errno: Int32
    public var description: String { "\(call) failed: errno \(errno)" }

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }
}
