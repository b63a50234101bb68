/// Store failures, mapped one-to-one onto the CLI's error codes where the user must act.
public enum StoreError: Error, Equatable, Sendable {
    case notInitialized
    case alreadyInitialized
    case wrongPassphrase
    case storeCorrupt(String)
    case busy
    case sqlite(code: Int32, message: String)
}
