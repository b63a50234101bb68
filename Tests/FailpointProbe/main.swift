// `burrow` with its crash points armed, for the crash tests only: BURROW_TEST_FAILPOINT=NAME[:N]
// makes the process die (exit 86) at the Nth pass through failpoint NAME. The real `burrow`
// never reads that variable. `burrow-failpoint-probe --list-failpoints` prints every name.
import BurrowCLI
import Foundation
@_spi(Failpoints) import Node

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--list-failpoints"] {
    for name in Failpoints.names { print(name) }
    exit(0)
}
if let spec = ProcessInfo.processInfo.environment["BURROW_TEST_FAILPOINT"], !spec.isEmpty {
    guard Failpoints.arm(spec) else {
        FileHandle.standardError.write(Data("burrow-failpoint-probe: no failpoint \(spec)\n".utf8))
        exit(2)
    }
}
await BurrowMain.run(arguments)
