/// Public relays `burrow relay add --public` adds, only when asked: the defaults Whistle ships
/// with. Kept in step with `Relays/public-relays.txt` (a test compares them). Whether they are
/// up cannot be checked from here.
public enum PublicRelays {
    public static let list = [
        "wss://relay.damus.io",
        "wss://nos.lol",
        "wss://relay.primal.net",
    ]
}
