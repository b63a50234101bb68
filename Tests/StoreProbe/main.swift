// A helper process for StoreTests' multi-process cases: it owns a home the way `burrow` would.
//
//   StoreProbe hold HOME         open the store, print "ready", keep it until stdin closes
//   StoreProbe open HOME         try to open; print "opened" (exit 0) or "error CODE" (exit 3)
//   StoreProbe insert HOME RUN   insert events in a loop, one transaction each, printing
//                                "committed <id hex>" after each commit returns
//
// The passphrase comes from $STORE_PROBE_PASSPHRASE, never from the command line.
import Foundation
import Store

func emit(_ line: String) {
    print(line)
    fflush(nil)  // all streams: naming the C global `stdout` is not concurrency-safe
}

func code(_ error: Error) -> String {
    guard let e = error as? StoreError else { return "other" }
    switch e {
    case .notInitialized: return "notInitialized"
    case .alreadyInitialized: return "alreadyInitialized"
    case .wrongPassphrase: return "wrongPassphrase"
    case .passphraseChangedMeanwhile: return "passphraseChangedMeanwhile"
    case .locked: return "locked"
    case .storeCorrupt: return "storeCorrupt"
    case .busy: return "busy"
    case .sqlite: return "sqlite"
    case .invalidKDFMemory: return "invalidKDFMemory"
    case .invalidInput: return "invalidInput"
    case .io: return "io"
    case .keyDerivationFailed: return "keyDerivationFailed"
    case .unsupportedSchemaVersion: return "unsupportedSchemaVersion"
    case .misuse: return "misuse"
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Event id for `counter` of run `run`: distinct across runs and counters.
func eventID(run: UInt64, counter: UInt64) -> [UInt8] {
    var id = [UInt8](repeating: 0xAB, count: 16)
    for shift in stride(from: 56, through: 0, by: -8) { id.append(UInt8(truncatingIfNeeded: run >> UInt64(shift))) }
    for shift in stride(from: 56, through: 0, by: -8) { id.append(UInt8(truncatingIfNeeded: counter >> UInt64(shift))) }
    return id
}

let args = CommandLine.arguments
guard args.count >= 3, let passphrase = ProcessInfo.processInfo.environment["STORE_PROBE_PASSPHRASE"] else {
    FileHandle.standardError.write(Data("usage: StoreProbe hold|open|insert HOME [RUN] (passphrase in $STORE_PROBE_PASSPHRASE)\n".utf8))
    exit(2)
}
let home = URL(fileURLWithPath: args[2])

let store: BurrowStore
do {
    store = try BurrowStore.open(home: home, passphrase: Array(passphrase.utf8))
} catch {
    emit("error \(code(error))")
    exit(3)
}

switch args[1] {
case "open":
    emit("opened")
    store.close()
case "hold":
    emit("ready")
    while readLine() != nil {}
    store.close()
case "insert":
    let run = args.count > 3 ? UInt64(args[3]) ?? 0 : 0
    let padding = String(repeating: "p", count: 1500)
    var counter: UInt64 = 0
    while true {
        let id = eventID(run: run, counter: counter)
        do {
            try store.transaction { tx in
                let event = StoredEvent(
                    id: id, kind: 1, pubkey: [UInt8](repeating: 7, count: 32), createdAt: Int64(counter),
                    json: "{\"content\":\"probe \(run) \(counter) \(padding)\"}", receivedAt: Int64(counter))
                try tx.events.insert(event)
                try tx.processedEvents.mark(eventID: id, outcome: "applied", at: Int64(counter))
            }
        } catch {
            emit("error \(code(error))")
            exit(3)
        }
        emit("committed \(hex(id))")
        counter += 1
    }
default:
    emit("error usage")
    exit(2)
}
