import Foundation
import Location
import Logging
import Node
import ServiceLifecycle
import Store

/// `run`'s location sharing (issue 23): one runner per share that is not paused, each reading
/// its source and feeding its `ShareSchedule`; what the schedule plans is published as a
/// mailbox job, like any command. Shares started, changed, paused or stopped while `run` goes
/// are picked up within two seconds. A source that fails is retried with backoff (1 s doubling
/// to a minute) and its reason shown by `share status`.
struct LocationSharing: Service {
    let node: BurrowNode
    let mailbox: NodeMailbox
    let timeout: Duration

    /// How often the stored shares are read again.
    static let refresh: Duration = .seconds(2)
    /// A source's last fix is written to the store at most this often (`share status`).
    static let fixRecordInterval: Double = 30

    func run() async throws {
        await cancelWhenGracefulShutdown { await self.superviseShares() }
    }

    private func superviseShares() async {
        var runners: [[UInt8]: (share: StoredLocationShare, task: Task<Void, Never>)] = [:]
        defer { for runner in runners.values { runner.task.cancel() } }
        while !Task.isCancelled {
            if let shares = try? await mailbox.write({ _ in try node.groups.storedShares() }) {
                let wanted = Dictionary(shares.filter { !$0.paused }.map { ($0.mlsGroupID, $0) }, uniquingKeysWith: { first, _ in first })
                for (id, runner) in runners where !(wanted[id].map { Self.sameSettings($0, runner.share) } ?? false) {
                    runner.task.cancel()
                    runners[id] = nil
                }
                for (id, share) in wanted where runners[id] == nil {
                    runners[id] = (share, Task { await ShareRunner(node: node, mailbox: mailbox, timeout: timeout, share: share).run() })
                }
            }
            try? await Task.sleep(for: Self.refresh)
        }
    }

    static func sameSettings(_ a: StoredLocationShare, _ b: StoredLocationShare) -> Bool {
        a.source == b.source && a.interval == b.interval && a.fuzz == b.fuzz && a.battery == b.battery
    }
}

/// One share: its source read, its schedule fed, its publishes made.
struct ShareRunner {
    let node: BurrowNode
    let mailbox: NodeMailbox
    let timeout: Duration
    let share: StoredLocationShare

    func run() async {
        guard var schedule = try? ShareSchedule(interval: share.interval), let source = try? ShareSource(parsing: share.source) else {
            record(ShareProblem(.sourceUnavailable, "the share's settings are not valid"))
            return
        }
        var lastRecordedFix = 0.0
        var lastBatteryRead = -Double.infinity
        var recordedSchedule: StoredLocationShare.ScheduleState?
        /// Tells `share status` where the schedule stands, when that changed.
        func recordSchedule(now: Double) {
            let state = StoredLocationShare.ScheduleState(stationary: schedule.stationary, intervalInForce: schedule.intervalInForce,
                                                          nextPublishAt: Int64(schedule.nextWake(now: now).rounded(.up)))
            guard state != recordedSchedule else { return }
            recordedSchedule = state
            node.groups.recordShare(share.mlsGroupID, schedule: state)
        }
        /// One position from the source: checked, fed to the schedule, published when planned.
        func take(_ reported: UnverifiedFix) async {
            let now = Date().timeIntervalSince1970
            if share.battery, now - lastBatteryRead >= 60 {
                lastBatteryRead = now
                if let percent = BatteryLevel.percent(), let plan = schedule.receive(battery: percent, now: now) { await publish(plan) }
            }
            let fix: Fix
            do { fix = try reported.validated(now: now, maximumAge: Double(schedule.intervalInForce)) } catch {
                if now - lastRecordedFix >= LocationSharing.fixRecordInterval {
                    lastRecordedFix = now
                    record(ShareProblem(.noFix, "no usable fix: \(error)"))
                }
                return
            }
            if now - lastRecordedFix >= LocationSharing.fixRecordInterval {
                lastRecordedFix = now
                node.groups.recordShare(share.mlsGroupID, fixAt: Int64(now), problem: nil)
            }
            if let plan = schedule.receive(fix, now: now) { await publish(plan) }
            recordSchedule(now: now)
        }
        switch source {
        case .fixed(let latitude, let longitude):
            // A home hub: its position, fresh at every wake.
            while !Task.isCancelled {
                await take(UnverifiedFix(mode: .twoD, time: Date().timeIntervalSince1970, latitude: latitude, longitude: longitude))
                let wait = schedule.nextWake(now: Date().timeIntervalSince1970) - Date().timeIntervalSince1970
                try? await Task.sleep(for: .milliseconds(Int64(max(1, min(wait, Double(share.interval))) * 1000)))
            }
        case .gpsd(let host, let port):
            await readWithBackoff(take) {
                do {
                    let (fixes, close) = try await GPSDReader.positions(host: host, port: port)
                    return .success((fixes, close, "gpsd at \(host):\(port) closed the connection"))
                } catch {
                    return .failure(ShareProblem(.sourceUnavailable, "gpsd at \(host):\(port) does not answer (\(error))"))
                }
            }
        case .geoclue:
            await readWithBackoff(take) {
                do throws(GeoClueFailure) {
                    let (fixes, close) = try await GeoClueReader.positions()
                    return .success((fixes, close, "GeoClue left the system bus"))
                } catch {
                    if case .denied = error { return .failure(ShareProblem(.locationDenied, error.description)) }
                    return .failure(ShareProblem(.sourceUnavailable, error.description))
                }
            }
        }
    }

    /// A source's positions: `connect` opens it (or says why not); its fixes go to `take` until it
    /// ends, then it is opened again after a backoff of 1 s doubling to a minute (reset by a
    /// connection that worked). Each failure is recorded for `share status`.
    private func readWithBackoff(
        _ take: (UnverifiedFix) async -> Void,
        connect: () async -> Result<(fixes: AsyncStream<UnverifiedFix>, close: @Sendable () -> Void, ended: String), ShareProblem>
    ) async {
        var backoff = 1.0
        while !Task.isCancelled {
            switch await connect() {
            case .success(let source):
                backoff = 1
                for await fix in source.fixes {
                    if Task.isCancelled { break }
                    await take(fix)
                }
                source.close()
                if !Task.isCancelled { record(ShareProblem(.sourceUnavailable, source.ended)) }
            case .failure(let problem):
                record(problem)
            }
            try? await Task.sleep(for: .milliseconds(Int64(backoff * 1000)))
            backoff = min(backoff * 2, 60)
        }
    }

    private func publish(_ plan: ShareSchedule.Publish) async {
        do {
            _ = try await mailbox.write { _ in try await node.groups.publishShared(share.mlsGroupID, plan: plan, fuzz: share.fuzz, timeout: timeout) }
        } catch {
            record(ShareProblem(.publishFailed, "the location was not published: \(BurrowFailure(describing: error).message)"))
        }
    }

    private func record(_ problem: ShareProblem) { node.groups.recordShare(share.mlsGroupID, problem: problem) }
}

/// The battery level from `/sys/class/power_supply` (the first supply of type Battery), if any.
enum BatteryLevel {
    static func percent(root: String = "/sys/class/power_supply") -> Int64? {
        guard let supplies = try? FileManager.default.contentsOfDirectory(atPath: root) else { return nil }
        for supply in supplies.sorted() {
            let base = root + "/" + supply
            guard let type = try? String(contentsOfFile: base + "/type", encoding: .utf8),
                  type.trimmingCharacters(in: .whitespacesAndNewlines) == "Battery",
                  let text = try? String(contentsOfFile: base + "/capacity", encoding: .utf8),
                  let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            return min(100, max(0, value))
        }
        return nil
    }
}
