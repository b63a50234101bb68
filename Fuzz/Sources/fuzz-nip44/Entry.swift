import FuzzTargets

// libFuzzer's hooks for `NIP44Target` (see Sources/FuzzTargets); libFuzzer supplies `main`.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    LibFuzzerEntry.initialize(NIP44Target.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    LibFuzzerEntry.run(NIP44Target.self, data, size)
}
