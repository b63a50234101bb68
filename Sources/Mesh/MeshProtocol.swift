/// Version 1 of the Burrow mesh (`Docs/protocols/mesh.md`); byte 0 of every packet and fragment frame.
public enum MeshProtocol {
    public static let version: UInt8 = 1
}
