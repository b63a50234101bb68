import Nostr
import Synchronization

/// People's names: our own kind-0 profile, the profiles of the people we show (members,
/// inviters) as fetched or pushed live, and names resolved from the command line.
public final class ProfileService: ContextualService {
    let context: NodeContext
    let gateway: RelayGateway
    /// The authors the live kind-0 filter asked for: the only profiles a live event may store
    /// (a relay may send others; the set is not recomputed per event).
    private let followed = Mutex<Set<PublicKey>>([])

    init(context: NodeContext, gateway: RelayGateway) {
        self.context = context
        self.gateway = gateway
    }

    var liveProfileAuthors: Set<PublicKey> {
        get { followed.withLock { $0 } }
        set { followed.withLock { $0 = newValue } }
    }
}
