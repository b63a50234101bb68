import Foundation
import Nostr

/// What one of our commits meant to do, kept until the commit is settled: when another
/// commit of the same epoch wins the race, the intent is applied again on top of the winner
/// (an add re-adds with a fresh welcome, a rename renames again).
enum CommitIntent: Equatable {
    case add([PublicKey])
    case remove([PublicKey])
    case rename(name: String?, description: String?)
    case admins(add: [PublicKey], remove: [PublicKey])

    var json: String {
        var object: [String: Any]
        switch self {
        case .add(let keys): object = ["op": "add", "keys": keys.map(\.hex)]
        case .remove(let keys): object = ["op": "remove", "keys": keys.map(\.hex)]
        case .rename(let name, let description):
            object = ["op": "rename"]
            if let name { object["name"] = name }
            if let description { object["description"] = description }
        case .admins(let add, let remove): object = ["op": "admins", "add": add.map(\.hex), "remove": remove.map(\.hex)]
        }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// Parses what `json` wrote (our own store: anything else is nil).
    init?(json: String) {
        guard let object = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any],
              let op = object["op"] as? String else { return nil }
        func keys(_ field: String) -> [PublicKey]? {
            guard let list = object[field] as? [String] else { return nil }
            let parsed = list.compactMap { try? PublicKey(hex: $0) }
            return parsed.count == list.count ? parsed : nil
        }
        switch op {
        case "add": guard let k = keys("keys") else { return nil }; self = .add(k)
        case "remove": guard let k = keys("keys") else { return nil }; self = .remove(k)
        case "rename": self = .rename(name: object["name"] as? String, description: object["description"] as? String)
        case "admins": guard let a = keys("add"), let r = keys("remove") else { return nil }; self = .admins(add: a, remove: r)
        default: return nil
        }
    }

    /// What kind of change it is, for logs and reports (names and keys stay out of them).
    var kind: String {
        switch self {
        case .add: return "add"
        case .remove: return "remove"
        case .rename: return "rename"
        case .admins: return "admins"
        }
    }
}
