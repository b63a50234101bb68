import FuzzTargets

// libFuzzer's hooks for `MLSMessageTarget` (see Sources/FuzzTargets); libFuzzer supplies `main`.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    LibFuzzerEntry.initialize(MLSMessageTarget.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    LibFuzzerEntry.run(MLSMessageTarget.self, data, size)
}
