/// What `burrow --version` prints: the program's version and the protocol versions it speaks,
/// so a family comparing two machines sees at once whether they can talk.
enum BurrowVersion {
    static let program = "0.3.0"
    static let line = "burrow \(program) (Marmot/MDK 0.8.0, MLS ciphersuite 0x0001, Pigeon DM v1, mesh v1)"
}
