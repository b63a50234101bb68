import Nostr
import Pigeon

/// Entry points for `burrow-bench` (the `StoreAccess` SPI): the receiving side's work per gift
/// wrap, without relays.
extension DirectMessageService {
    /// The own DM card, made on first use.
    @_spi(StoreAccess) public func localCardForBench() throws -> ContactCard {
        try store.transaction { try pigeon($0).local.card }
    }

}
