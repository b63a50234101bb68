import Foundation

/// Times for people: the local time (the `TZ` environment variable is respected), `HH:MM` for
/// today and `YYYY-MM-DD HH:MM` for any other day. JSON keeps Unix seconds.
enum HumanTime {
    static func format(seconds: Int64, now: Int64 = Int64(Date().timeIntervalSince1970)) -> String {
        tzset()
        var when = time_t(seconds), today = time_t(now)
        var parts = tm(), current = tm()
        guard localtime_r(&when, &parts) != nil, localtime_r(&today, &current) != nil else { return String(seconds) }
        let clock = String(format: "%02d:%02d", parts.tm_hour, parts.tm_min)
        guard parts.tm_year != current.tm_year || parts.tm_yday != current.tm_yday else { return clock }
        return String(format: "%04d-%02d-%02d ", Int(parts.tm_year) + 1900, parts.tm_mon + 1, parts.tm_mday) + clock
    }

    /// The same for a time in milliseconds (DMs).
    static func format(milliseconds: UInt64) -> String {
        format(seconds: Int64(clamping: milliseconds / 1000))
    }
}
