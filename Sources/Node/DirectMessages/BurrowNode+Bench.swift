import Nostr
import Pigeon

/// Entry points for `burrow-bench` (the `StoreAccess` SPI): the receiving side's work per gift
/// wrap, without relays.
extension BurrowNode {
    /// The own DM card, made on first use.
    @_spi(StoreAccess) public func localCardForBench() throws -> ContactCard {
        try store.transaction { try pigeon($0).local.card }
    }

    /// One gift wrap to us, processed as `sync` and `run` do (no replies are sent).
    @_spi(StoreAccess) public func processGiftWrapForBench(_ event: Event) -> SyncReport {
        var report = SyncReport()
        handleGiftWrap(event, report: &report)
        return report
    }
}
