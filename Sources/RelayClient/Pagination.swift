import Nostr

/// Walks a query backwards through time with `until` when a relay caps how many events one
/// REQ returns (LocalRelay: 500; every relay has some cap).
///
/// After each page: nothing came, or fewer than `smallestCap` (no relay caps that low) →
/// done. Some new events → ask again with
/// `until` = the oldest created_at of the page (inclusive, because several events can share
/// a second; the repeats are dropped by id). Only repeats came → the page held nothing older
/// than `until`, unless that one second alone filled a whole page; then step once to
/// `until - 1` (events of that second beyond the cap are unreachable through NIP-01). A
/// `limit` in the filter bounds the total. Pure value: the pool feeds it pages.
struct Paginator {
    let filter: Filter
    let smallestCap: Int
    private(set) var seen = Set<EventID>()
    private(set) var pages = 0
    private var until: Int64?
    private var largestPage = 0
    private var steppedPastSecond = false
    private(set) var isDone = false

    init(filter: Filter, smallestCap: Int = 1) {
        self.filter = filter
        self.smallestCap = max(smallestCap, 1)
        self.until = filter.until
    }

    /// The filter for the next page, or nil when done.
    var nextFilter: Filter? {
        guard !isDone else { return nil }
        var next = filter
        next.until = until
        return next
    }

    /// Records one page; returns the events not seen on an earlier page.
    mutating func record(page: [Event]) -> [Event] {
        pages += 1
        var fresh: [Event] = []
        var oldest = Int64.max
        for event in page {
            oldest = min(oldest, event.createdAt)
            if seen.insert(event.id).inserted { fresh.append(event) }
        }
        if page.count < smallestCap {
            isDone = true
            return fresh
        }
        if let limit = filter.limit, seen.count >= limit {
            isDone = true
            return fresh
        }
        largestPage = max(largestPage, page.count)
        if fresh.isEmpty {
            let wholePageInOneSecond = page.count >= largestPage && !steppedPastSecond
            if wholePageInOneSecond, oldest > (filter.since ?? 0) {
                until = oldest - 1
                steppedPastSecond = true
            } else {
                isDone = true
            }
            return fresh
        }
        steppedPastSecond = false
        until = oldest
        if let since = filter.since, oldest < since { isDone = true }
        return fresh
    }
}
