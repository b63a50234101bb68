/// How many zero bytes to append to a PrivateMessageContent before encryption (RFC 9420
/// §6.3.1), hiding the exact content length from observers.
///
/// Marmot uses `.none`, OpenMLS's default. Receivers accept any amount of padding as long as it
/// is all zero.
public enum MessagePadding: Hashable, Sendable {
    /// No padding.
    case none
    /// Pad the encoded PrivateMessageContent to the next multiple of this many bytes (OpenMLS
    /// `padding_size`); values below 2 mean no padding.
    case toMultiple(of: Int)

    /// The number of zero bytes to add to a content of `contentLength` bytes.
    func paddingLength(contentLength: Int) -> Int {
        switch self {
        case .none:
            return 0
        case .toMultiple(let block):
            guard block > 1 else { return 0 }
            let remainder = contentLength % block
            return remainder == 0 ? 0 : block - remainder
        }
    }
}
