import MLS
import Marmot
import Mesh
import Node
import RelayClient
import Nostr
import Pigeon

import Store

extension CLIError {
    /// Maps a module's typed error onto the contract's error codes. Messages come from the
    /// modules' own descriptions, which never contain secrets.
    static func from(_ error: Error) -> CLIError {
        let mapped = mapped(error)
        guard mapped.code == .relay_unreachable || mapped.code == .timeout,
              mapped.message.contains(BurrowNode.embeddedRelay) else { return mapped }
        // The default address answers only while `burrow run` serves it: say so.
        return CLIError(mapped.code, mapped.message + " (nothing serves the embedded relay outside `burrow run`: start `burrow run`"
                        + " in another terminal, or add a relay with `burrow relay add URL`)")
    }

    private static func mapped(_ error: Error) -> CLIError {
        switch error {
        case let error as CLIError:
            return error
        case let error as StoreError:
            switch error {
            case .notInitialized: return CLIError(.not_initialized, "\(error)")
            case .alreadyInitialized: return CLIError(.already_initialized, "\(error)")
            case .wrongPassphrase: return CLIError(.wrong_passphrase, "\(error)")
            case .storeCorrupt: return CLIError(.store_corrupt, "\(error)")
            case .busy: return CLIError(.busy, "\(error)")
            case .invalidKDFMemory, .invalidInput: return CLIError(.invalid_input, "\(error)")
            default: return CLIError(.internal, "\(error)")
            }
        case let error as NodeError:
            switch error {
            case .invalidInput(let m): return CLIError(.invalid_input, m)
            case .relayRejected(let m): return CLIError(.relay_rejected, m)
            case .relayUnreachable(let m): return CLIError(.relay_unreachable, m)
            case .timeout(let m): return CLIError(.timeout, m)
            case .internalError(let m): return CLIError(.internal, m)
            case .unknownGroup(let m): return CLIError(.unknown_group, m)
            case .ambiguousGroup(let m): return CLIError(.ambiguous_group, m)
            case .unknownInvite(let m): return CLIError(.unknown_invite, m)
            case .notAdmin(let m): return CLIError(.not_admin, m)
            case .lastAdmin(let m): return CLIError(.last_admin, m)
            case .noKeyPackage(let m): return CLIError(.no_key_package, m)
            case .welcomeTooLarge(let m): return CLIError(.welcome_too_large, m)
            case .unknownContact(let m): return CLIError(.unknown_contact, m)
            case .ambiguousContact(let m): return CLIError(.ambiguous_contact, m)
            case .safetyNumberMismatch(let m): return CLIError(.safety_number_mismatch, m)
            case .noRoute(let m): return CLIError(.no_route, m)
            case .messageTooLarge(let m): return CLIError(.message_too_large, m)
            case .controlNotAnswering: return CLIError(.busy, "\(error)")
            case .controlSocketUnavailable, .controlFrameTooLarge, .controlFrameTruncated, .controlFrameMalformed:
                return CLIError(.internal, "\(error)")
            }
        case let error as MeshNodeError:
            switch error {
            case .noAdapter(let m): return CLIError(.no_adapter, m)
            case .bluetoothDenied(let m): return CLIError(.bluetooth_denied, m)
            case .meshOff(let m): return CLIError(.mesh_off, m)
            case .portInUse(let m): return CLIError(.mesh_port_in_use, m)
            case .noInvites(let m): return CLIError(.no_invites, m)
            case .join(let code, let m): return CLIError(Code(rawValue: code) ?? .join_failed, m)
            }
        case let error as JoinRequestFailure:
            switch error {
            case .unknownRequest(let m): return CLIError(.unknown_request, m)
            case .keyPackageInvalid(let m): return CLIError(.key_package_invalid, m)
            case .joinRefused(let m): return CLIError(.join_refused, m)
            }
        case let error as JoinRequestError:
            if case .keyPackageInvalid = error { return CLIError(.key_package_invalid, "\(error)") }
            return CLIError(.invalid_input, "\(error)")
        case let error as MarmotError:
            switch error {
            case .notAdmin: return CLIError(.not_admin, "\(error)")
            case .lastAdmin: return CLIError(.last_admin, "\(error)")
            default: return CLIError(.invalid_input, "\(error)")
            }
        case let error as MLSError:
            return CLIError(.invalid_input, "\(error)")
        case let error as PigeonError:
            switch error {
            case .badCard: return CLIError(.bad_card, "not a valid contact card (\(error.rawValue))")
            case .badSignature: return CLIError(.bad_signature, "a signature of the card does not verify (\(error.rawValue))")
            case .cardOutdated: return CLIError(.card_outdated, "an older card than the one stored (\(error.rawValue))")
            case .messageTooLarge: return CLIError(.message_too_large, "the message is too large (\(error.rawValue))")
            case .unknownContact: return CLIError(.unknown_contact, "no such contact (\(error.rawValue))")
            default: return CLIError(.invalid_input, error.rawValue)
            }
        case let error as RelayClientError:
            switch error {
            case .timeout: return CLIError(.timeout, "\(error)")
            case .rejected: return CLIError(.relay_rejected, "\(error)")
            case .invalidURL: return CLIError(.invalid_input, "\(error)")
            case .noRelayAnswered(let failures)
                where !failures.isEmpty && failures.allSatisfy({ if case .timeout = $0.error { return true } else { return false } }):
                return CLIError(.timeout, "\(error)")
            default: return CLIError(.relay_unreachable, "\(error)")
            }
        case is NostrError:
            return CLIError(.invalid_input, "\(error)")
        default:
            return CLIError(.internal, "\(error)")
        }
    }
}
