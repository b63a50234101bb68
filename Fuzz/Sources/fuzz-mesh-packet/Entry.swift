import FuzzTargets

// libFuzzer's hooks for `MeshPacketTarget` (see Sources/FuzzTargets); libFuzzer supplies `main`.

@_cdecl("LLVMFuzzerInitialize")
public func fuzzInitialize(_ argc: UnsafeMutablePointer<Int32>?, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>?) -> Int32 {
    LibFuzzerEntry.initialize(MeshPacketTarget.self)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    LibFuzzerEntry.run(MeshPacketTarget.self, data, size)
}
