import Store

extension BurrowNode {
    /// Re-encrypts the store under `newPassphrase` (`burrow passphrase change`); a crash at any
    /// point leaves the old or the new passphrase opening it (`BurrowStore.changePassphrase`).
    public func changePassphrase(to newPassphrase: [UInt8], kdfMemoryMiB: Int? = nil) throws -> StoreKDFParameters {
        try store.changePassphrase(to: newPassphrase, kdfMemoryMiB: kdfMemoryMiB) { stage in
            switch stage {
            case .copied: Failpoint.passphraseCopied.check()
            case .pending: Failpoint.passphrasePending.check()
            case .swapped: Failpoint.passphraseSwapped.check()
            }
        }
        return store.kdfParameters
    }
}
