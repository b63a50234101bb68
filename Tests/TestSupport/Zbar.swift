import Foundation
import XCTest

/// An 8-bit greyscale image of modules, written as binary PGM (P5), which zbarimg reads.
public struct Image: Sendable {
    public let width: Int
    public let height: Int
    public let pixels: [UInt8]

    /// `rows` (true = dark) framed by `border` modules of one colour, `scale` pixels per module.
    public init(rows: [[Bool]], border: Int, borderDark: Bool, scale: Int) {
        let moduleWidth = (rows.first?.count ?? 0) + 2 * border
        let moduleHeight = rows.count + 2 * border
        width = moduleWidth * scale
        height = moduleHeight * scale
        var pixels = [UInt8](repeating: 0, count: width * height)
        for y in 0..<height {
            for x in 0..<width {
                let mx = x / scale - border, my = y / scale - border
                let dark = (0..<rows.count).contains(my) && (0..<rows[my].count).contains(mx) ? rows[my][mx] : borderDark
                pixels[y * width + x] = dark ? 0 : 255
            }
        }
        self.pixels = pixels
    }

    public var pgm: Data {
        Data("P5\n\(width) \(height)\n255\n".utf8) + Data(pixels)
    }
}

public enum Zbar {
    public static let optOutVariable = "BURROW_ALLOW_MISSING_PEERS"

    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "zbarimg not found on PATH (nor ZBARIMG): install the Debian package zbar-tools "
                + "(apt-get install zbar-tools), or set \(Zbar.optOutVariable)=1 to skip the decoder round trips"
        }
    }

    public struct Failed: Error, CustomStringConvertible {
        public let status: Int32
        public let stderr: String
        public var description: String { "zbarimg exited \(status) (4 = no symbol found): \(stderr)" }
    }

    /// The zbarimg program, or a failure (a skip under the opt-out) when there is none.
    public static func program() throws -> URL {
        let environment = ProcessInfo.processInfo.environment
        var candidates: [String] = []
        if let explicit = environment["ZBARIMG"], !explicit.isEmpty { candidates.append(explicit) }
        for directory in (environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            candidates.append("\(directory)/zbarimg")
        }
        if let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) {
            return URL(fileURLWithPath: found)
        }
        if environment[optOutVariable] == "1" { throw XCTSkip(Missing().description) }
        throw Missing()
    }

    /// The text zbarimg reads from the image: `--raw` prints each symbol's data and a newline;
    /// `-q` drops the statistics line. Only QR codes are looked for.
    public static func decode(_ image: Image) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qrcode-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("symbol.pgm")
        try image.pgm.write(to: file)
        return try decode(file: file)
    }

    /// The text of the QR code in an image file zbarimg reads (PGM, PNG: a browser's screenshot).
    public static func decode(file: URL) throws -> String {
        let program = try program()
        let process = Process()
        process.executableURL = program
        process.arguments = ["--raw", "-q", "-Sdisable", "-Sqrcode.enable", file.path]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failed(status: process.terminationStatus, stderr: String(decoding: errorData, as: UTF8.self))
        }
        var text = String(decoding: data, as: UTF8.self)
        if text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
