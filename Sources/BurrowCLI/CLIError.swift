import Node

/// A failure the CLI reports: the node's contract failure (Docs/cli.md "Errors"), with the
/// code and a message for a person that never contains secrets.
typealias CLIError = BurrowFailure

extension BurrowFailure {
    /// The contract's reading of any error a command met.
    static func from(_ error: Error) -> BurrowFailure { BurrowFailure(describing: error) }
}
