/// A test body that ran past its bound (the error fails the test that threw it).
public struct TestTimedOut: Error, CustomStringConvertible {
    public let seconds: Double
    public init(seconds: Double) { self.seconds = seconds }
    public var description: String { "test body exceeded \(seconds) s" }
}

/// Runs a test body with a hard bound on its time; everything it awaits must be cancellable.
public func bounded<T: Sendable>(
    _ seconds: Double, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await body() }
        group.addTask {
            try await Task.sleep(for: .seconds(seconds))
            return nil
        }
        defer { group.cancelAll() }
        guard let first = try await group.next(), let value = first else { throw TestTimedOut(seconds: seconds) }
        return value
    }
}
