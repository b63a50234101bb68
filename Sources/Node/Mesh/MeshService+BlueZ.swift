import Logging
import Mesh

extension MeshService {
    static func startBlueZ(_ setup: MeshSetup, adapter: String?, dmIdentityKeys: [[UInt8]], logger: Logger) async throws -> MeshService {
        throw MeshNodeError.noAdapter("BlueZ is not wired into this build yet: use --mesh udp:PORT,PEER,…")
    }
}
