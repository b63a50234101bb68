/// A value bound to a statement parameter. Our SQL never splices values into its text: every
/// value goes through a binding, so stored content can never reach SQL text or its errors.
public enum SQLiteValue: Equatable, Sendable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

extension SQLiteValue {
    public static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
    public static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
}
