import FuzzTargets

// libFuzzer's hooks for `BackupFileTarget` (see Sources/FuzzTargets); libFuzzer supplies `main`.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    LibFuzzerEntry.initialize(BackupFileTarget.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    LibFuzzerEntry.run(BackupFileTarget.self, data, size)
}
