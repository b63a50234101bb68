import Foundation

/// One process owns a home: an exclusive, non-blocking `flock` on `store.lock`, held for the
/// life of a `BurrowStore`. The kernel drops it when the process dies, so a killed owner never
/// leaves a stale lock. The descriptor is close-on-exec so child processes do not inherit it.
final class HomeLock {
    private var fd: Int32

    init(path: String) throws {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StoreError.io(operation: "opening the home lock file", errno: errno) }
        if flock(fd, LOCK_EX | LOCK_NB) != 0 {
            let e = errno
            close(fd)
            if e == EWOULDBLOCK || e == EAGAIN { throw StoreError.busy }
            throw StoreError.io(operation: "locking the home", errno: e)
        }
        _ = fchmod(fd, 0o600)
        self.fd = fd
    }

    deinit { release() }

    func release() {
        guard fd >= 0 else { return }
        _ = flock(fd, LOCK_UN)
        close(fd)
        fd = -1
    }
}
