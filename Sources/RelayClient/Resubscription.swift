import Nostr

/// How a live subscription resumes after a reconnect: from the newest created_at seen on
/// that relay (or, when none came, the time of its EOSE) minus a margin, so events published
/// while we were away arrive without replaying all history. Gift wraps (kind 1059) are
/// back-dated by up to two days (NIP-59), so filters that may match them use the longer
/// margin; events seen before are dropped by id.
enum Resubscription {
    static func filters(
        _ original: [Filter], lastSeenCreatedAt: Int64?, eoseAt: Int64?,
        margin: Duration, giftWrapMargin: Duration
    ) -> [Filter] {
        guard let anchor = lastSeenCreatedAt ?? eoseAt else { return original }
        return original.map { filter in
            let mayMatchGiftWraps = filter.kinds?.contains(Kind.giftWrap) ?? true
            let seconds = (mayMatchGiftWraps ? max(giftWrapMargin, margin) : margin).components.seconds
            let resumeAt = max(0, anchor - seconds)
            var resumed = filter
            if resumeAt > (filter.since ?? 0) {
                if let until = filter.until, resumeAt > until { return filter }
                resumed.since = resumeAt
            }
            return resumed
        }
    }
}
