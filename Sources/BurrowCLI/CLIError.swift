/// A failure the CLI reports: `code` is one of the contract's error codes (Docs/cli.md),
/// `message` says what went wrong for a person and never contains secrets.
struct CLIError: Error {
    enum Code: String {
        case usage, passphrase_required, wrong_passphrase, store_corrupt, not_initialized
        case already_initialized, busy, invalid_input, unknown_group, ambiguous_group
        case unknown_invite, not_admin, last_admin, no_key_package, welcome_too_large
        case relay_rejected, relay_unreachable, timeout, `internal`
        case unknown_contact, ambiguous_contact, bad_card, bad_signature, card_outdated, safety_number_mismatch
        case message_too_large, no_route
        case no_adapter, bluetooth_denied, mesh_off, mesh_port_in_use, no_invites, invite_expired, wrong_code
        case too_many_attempts, invite_closed, invite_busy, key_package_invalid, join_refused, join_failed
        case unknown_request
    }

    let code: Code
    let message: String

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// Exit status per the contract: usage errors 2, every other failure 1.
    var exitCode: Int32 { code == .usage ? 2 : 1 }
}
