import Foundation
import Synchronization
import XCTest
@testable import Node

/// The node's single-writer queue: jobs one at a time in order, and a job that yields its turn
/// (a nearby invite waiting on the mesh) lets later jobs run while its own store work still
/// queues as a job.
final class NodeMailboxTests: XCTestCase {
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])
        func log(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    func testJobsRunOneAtATimeInOrder() async throws {
        let mailbox = NodeMailbox()
        let journal = Journal()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for n in 0..<5 {
                group.addTask {
                    try await mailbox.run {
                        journal.log("start \(n)")
                        try? await Task.sleep(for: .milliseconds(20))
                        journal.log("end \(n)")
                    }
                }
                try await Task.sleep(for: .milliseconds(5))
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(journal.all, (0..<5).flatMap { ["start \($0)", "end \($0)"] })
        await mailbox.close()
    }

    func testAYieldedTurnLetsLaterJobsRunAndExclusiveWorkQueuesAsAJob() async throws {
        let mailbox = NodeMailbox()
        let journal = Journal()
        let longJob = Task {
            try await mailbox.run {
                journal.log("long: holds the turn")
                try await NodeMailbox.yieldingTurn {
                    try? await Task.sleep(for: .milliseconds(300))
                    try await NodeMailbox.exclusively { journal.log("long: store work as a job") }
                    journal.log("long: done")
                }
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        try await mailbox.run { journal.log("short job ran meanwhile") }
        try await longJob.value
        XCTAssertEqual(journal.all, ["long: holds the turn", "short job ran meanwhile", "long: store work as a job", "long: done"])
        // Outside any job, `exclusively` runs at once.
        try await NodeMailbox.exclusively { journal.log("plain") }
        XCTAssertEqual(journal.all.last, "plain")
        await mailbox.close()
    }
}
