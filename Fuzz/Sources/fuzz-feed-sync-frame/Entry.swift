import FuzzTargets

// libFuzzer's hooks for `FeedSyncFrameTarget` (see Sources/FuzzTargets); libFuzzer supplies `main`.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    LibFuzzerEntry.initialize(FeedSyncFrameTarget.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    LibFuzzerEntry.run(FeedSyncFrameTarget.self, data, size)
}
