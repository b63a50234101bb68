import Backup
import MLS
import Marmot
import Mesh
import Nostr
import Pigeon
import RelayClient
import Store

/// A failure as the contract reports it (Docs/cli.md "Errors"): one of its error codes and a
/// message for a person. Every module's typed error maps here once, so a program over the
/// node (the CLI, the control socket, the web page) prints errors without knowing the modules.
/// Messages come from the modules' own descriptions, which never contain secrets.
public struct BurrowFailure: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Code: String, Sendable, CaseIterable {
        case usage, passphrase_required, wrong_passphrase, store_corrupt, not_initialized
        case already_initialized, busy, invalid_input, unknown_group, ambiguous_group
        case unknown_invite, not_admin, last_admin, no_key_package, welcome_too_large
        case relay_rejected, relay_unreachable, timeout, `internal`
        case unknown_contact, ambiguous_contact, bad_card, bad_signature, card_outdated, safety_number_mismatch
        case message_too_large, no_route
        case no_adapter, bluetooth_denied, mesh_off, mesh_port_in_use, no_invites, invite_expired, wrong_code
        case too_many_attempts, invite_closed, invite_busy, key_package_invalid, join_refused, join_failed
        case unknown_request
        case web_port_in_use, web_unavailable
        case backup_corrupt, backup_unsupported, locked
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// Exit status per the contract: usage errors 2, every other failure 1.
    public var exitCode: Int32 { code == .usage ? 2 : 1 }

    /// The contract's reading of `error`, from whichever module threw it.
    public init(describing error: Error) {
        let mapped = Self.mapped(error)
        guard mapped.code == .relay_unreachable || mapped.code == .timeout,
              mapped.message.contains(BurrowNode.embeddedRelay) else {
            self = mapped
            return
        }
        // The default address answers only while a `burrow run` serves it: say so, and say
        // the right thing inside a running node, which found the port taken when it started.
        if NodeMailbox.current != nil {
            self.init(mapped.code, mapped.message + "\n(this `burrow run` found \(BurrowNode.embeddedRelay) served by another process"
                      + " when it started, and that process has gone: restart this `burrow run` to serve it itself, or add a relay"
                      + " with `burrow relay add URL`)")
        } else {
            self.init(mapped.code, mapped.message + "\n(nothing serves the embedded relay outside `burrow run`: start `burrow run`"
                      + " in another terminal, or add a relay with `burrow relay add URL`)")
        }
    }

    private static func mapped(_ error: Error) -> BurrowFailure {
        switch error {
        case let error as BurrowFailure: return error
        case let error as any BurrowFailureConvertible: return error.failure
        case let error as StoreError: return store(error)
        case let error as BackupError:
            switch error {
            case .corrupt: return BurrowFailure(.backup_corrupt, error.description)
            case .wrongPassphrase: return BurrowFailure(.wrong_passphrase, error.description)
            case .unsupported: return BurrowFailure(.backup_unsupported, error.description)
            case .cryptoFailed: return BurrowFailure(.internal, error.description)
            }
        case let error as NodeError: return node(error)
        case let error as MeshNodeError: return mesh(error)
        case let error as JoinRequestFailure:
            switch error {
            case .unknownRequest(let m): return BurrowFailure(.unknown_request, m)
            case .keyPackageInvalid(let m): return BurrowFailure(.key_package_invalid, m)
            case .joinRefused(let m): return BurrowFailure(.join_refused, m)
            }
        case let error as JoinRequestError:
            if case .keyPackageInvalid = error { return BurrowFailure(.key_package_invalid, "\(error)") }
            return BurrowFailure(.invalid_input, "\(error)")
        case let error as MarmotError:
            switch error {
            case .notAdmin: return BurrowFailure(.not_admin, "\(error)")
            case .lastAdmin: return BurrowFailure(.last_admin, "\(error)")
            default: return BurrowFailure(.invalid_input, "\(error)")
            }
        case let error as MLSError: return BurrowFailure(.invalid_input, "\(error)")
        case let error as PigeonError: return pigeon(error)
        case let error as RelayClientError: return relay(error)
        case is NostrError: return BurrowFailure(.invalid_input, "\(error)")
        default: return BurrowFailure(.internal, "\(error)")
        }
    }

    private static func store(_ error: StoreError) -> BurrowFailure {
        switch error {
        case .notInitialized: return BurrowFailure(.not_initialized, "\(error)")
        case .alreadyInitialized: return BurrowFailure(.already_initialized, "\(error)")
        case .wrongPassphrase, .passphraseChangedMeanwhile: return BurrowFailure(.wrong_passphrase, "\(error)")
        case .storeCorrupt: return BurrowFailure(.store_corrupt, "\(error)")
        case .busy: return BurrowFailure(.busy, "\(error)")
        case .locked: return BurrowFailure(.locked, "\(error)")
        case .invalidKDFMemory, .invalidInput: return BurrowFailure(.invalid_input, "\(error)")
        default: return BurrowFailure(.internal, "\(error)")
        }
    }

    private static func node(_ error: NodeError) -> BurrowFailure {
        switch error {
        case .invalidInput(let m): return BurrowFailure(.invalid_input, m)
        case .relayRejected(let m): return BurrowFailure(.relay_rejected, m)
        case .relayUnreachable(let m): return BurrowFailure(.relay_unreachable, m)
        case .timeout(let m): return BurrowFailure(.timeout, m)
        case .internalError(let m): return BurrowFailure(.internal, m)
        case .unknownGroup(let m): return BurrowFailure(.unknown_group, m)
        case .ambiguousGroup(let m): return BurrowFailure(.ambiguous_group, m)
        case .unknownInvite(let m): return BurrowFailure(.unknown_invite, m)
        case .notAdmin(let m): return BurrowFailure(.not_admin, m)
        case .lastAdmin(let m): return BurrowFailure(.last_admin, m)
        case .noKeyPackage(let m): return BurrowFailure(.no_key_package, m)
        case .welcomeTooLarge(let m): return BurrowFailure(.welcome_too_large, m)
        case .unknownContact(let m): return BurrowFailure(.unknown_contact, m)
        case .ambiguousContact(let m): return BurrowFailure(.ambiguous_contact, m)
        case .safetyNumberMismatch(let m): return BurrowFailure(.safety_number_mismatch, m)
        case .noRoute(let m): return BurrowFailure(.no_route, m)
        case .messageTooLarge(let m): return BurrowFailure(.message_too_large, m)
        }
    }

    private static func mesh(_ error: MeshNodeError) -> BurrowFailure {
        switch error {
        case .noAdapter(let m): return BurrowFailure(.no_adapter, m)
        case .bluetoothDenied(let m): return BurrowFailure(.bluetooth_denied, m)
        case .meshOff(let m): return BurrowFailure(.mesh_off, m)
        case .portInUse(let m): return BurrowFailure(.mesh_port_in_use, m)
        case .noInvites(let m): return BurrowFailure(.no_invites, m)
        case .join(let code, let m): return BurrowFailure(Code(rawValue: code) ?? .join_failed, m)
        }
    }

    private static func pigeon(_ error: PigeonError) -> BurrowFailure {
        switch error {
        case .badCard: return BurrowFailure(.bad_card, "not a valid contact card (\(error.rawValue))")
        case .badSignature: return BurrowFailure(.bad_signature, "a signature of the card does not verify (\(error.rawValue))")
        case .cardOutdated: return BurrowFailure(.card_outdated, "an older card than the one stored (\(error.rawValue))")
        case .messageTooLarge: return BurrowFailure(.message_too_large, "the message is too large (\(error.rawValue))")
        case .unknownContact: return BurrowFailure(.unknown_contact, "no such contact (\(error.rawValue))")
        default: return BurrowFailure(.invalid_input, error.rawValue)
        }
    }

    private static func relay(_ error: RelayClientError) -> BurrowFailure {
        switch error {
        case .timeout: return BurrowFailure(.timeout, "\(error)")
        case .rejected: return BurrowFailure(.relay_rejected, "\(error)")
        case .invalidURL: return BurrowFailure(.invalid_input, "\(error)")
        case .noRelayAnswered(let failures)
            where !failures.isEmpty && failures.allSatisfy({ if case .timeout = $0.error { return true } else { return false } }):
            return BurrowFailure(.timeout, "\(error)")
        default: return BurrowFailure(.relay_unreachable, "\(error)")
        }
    }
}

/// An error of a module above Node (the control socket) that knows its contract code.
public protocol BurrowFailureConvertible: Error {
    var failure: BurrowFailure { get }
}
