import Foundation
import NIOCore
import NIOPosix

/// The control socket's file, `<home>/burrow.sock`, and the file-system rules for it: it lives
/// in the 0700 home, is made 0600 right after binding, and an existing file is only ever
/// replaced when it is a socket nobody accepts on (what a killed `burrow run` leaves behind).
enum ControlSocketFile {
    static let name = "burrow.sock"
    /// NIO's bound on a Unix socket path (it keeps to the smallest `sun_path` of the platforms).
    static let maximumPathCount = 103

    static func path(home: URL) -> String {
        home.standardizedFileURL.appendingPathComponent(name).path
    }

    /// `path` if it fits in a socket address, else `error` with the reason.
    static func checkedPath(home: URL, error: (String) -> ControlError) throws -> String {
        let path = path(home: home)
        guard path.utf8.count <= maximumPathCount else {
            throw error("\(path) is \(path.utf8.count) bytes, longer than the \(maximumPathCount) a Unix socket path may have")
        }
        return path
    }

    /// The file's device and inode, so `close` removes the socket it bound and not a successor's.
    struct Identity: Equatable, Sendable {
        let device: UInt64
        let inode: UInt64

        init?(path: String) {
            var st = stat()
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFSOCK else { return nil }
            device = UInt64(st.st_dev)
            inode = UInt64(st.st_ino)
        }
    }

    /// Whether a connect failure means that nobody listens: no file (`ENOENT`), or a socket
    /// file without a listener (`ECONNREFUSED`).
    static func isNobodyListening(_ error: Error) -> Bool {
        guard let error = error as? IOError else { return false }
        return error.errnoCode == ECONNREFUSED || error.errnoCode == ENOENT
    }

    /// Makes `path` free for a new server: nothing there, or a stale socket, which is removed.
    /// Throws `socketUnavailable` for a live listener or anything that is not a socket.
    static func clearStale(path: String, group: EventLoopGroup) async throws {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw ControlError.socketUnavailable("inspecting \(path) failed (errno \(errno))")
        }
        guard (st.st_mode & S_IFMT) == S_IFSOCK else {
            throw ControlError.socketUnavailable("\(path) exists and is not a socket")
        }
        do {
            let probe = try await ClientBootstrap(group: group)
                .connectTimeout(.seconds(1))
                .connect(unixDomainSocketPath: path).get()
            try? await probe.close()
            throw ControlError.socketUnavailable("another process is listening on \(path)")
        } catch let error as ControlError {
            throw error
        } catch where isNobodyListening(error) {
            guard unlink(path) == 0 || errno == ENOENT else {
                throw ControlError.socketUnavailable("removing the stale socket \(path) failed (errno \(errno))")
            }
        } catch {
            throw ControlError.socketUnavailable("probing \(path) failed: \(error)")
        }
    }
}
