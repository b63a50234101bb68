import Node
import XCTest

private actor Elsewhere {
    func visit() -> Bool { BlockingWorkExecutor.isCurrent }
}

/// The CLI runs every command under `BlockingWorkExecutor.run`: nonisolated async code (all of
/// `BurrowNode`, and the store, Argon2id and MLS work it does) stays on the executor's Dispatch
/// queue across suspensions, inside default actors and in child tasks.
final class BlockingWorkExecutorTests: XCTestCase {
    func testNonisolatedWorkStaysOnTheQueueAcrossSuspensionsAndChildTasks() async {
        XCTAssertFalse(BlockingWorkExecutor.isCurrent)
        let seen = await BlockingWorkExecutor.run { () async -> [Bool] in
            var seen = [BlockingWorkExecutor.isCurrent]
            // Default actors follow the task's executor preference too (SE-0417).
            seen.append(await Elsewhere().visit())
            seen.append(BlockingWorkExecutor.isCurrent)
            try? await Task.sleep(for: .milliseconds(5))
            seen.append(BlockingWorkExecutor.isCurrent)
            let children = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<4 { group.addTask { BlockingWorkExecutor.isCurrent } }
                return await group.reduce(into: [Bool]()) { $0.append($1) }
            }
            return seen + children
        }
        XCTAssertEqual(seen, Array(repeating: true, count: 8))
    }

    func testErrorsPassThroughTyped() async {
        struct Refused: Error, Equatable {}
        do {
            try await BlockingWorkExecutor.run { () async throws(Refused) -> Void in throw Refused() }
            XCTFail("no error")
        } catch {
            XCTAssertEqual(error, Refused())
        }
    }
}
