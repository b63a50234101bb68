/// A value bound to a statement parameter. Our SQL never splices values into its text: every
/// value goes through a binding, so stored content can never reach SQL text or its errors.
enum SQLiteValue: Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null
}

extension SQLiteValue {
    static func int(_ value: Int) -> SQLiteValue { .integer(Int64(value)) }
    static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
}
