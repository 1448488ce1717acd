import Foundation
import ObjectStore

/// A change that sharing refused to take into the store, or to send to the server, because
/// it does not fit the model: a NULL in a required attribute, a name below its `minLength`,
/// a value of the wrong type or over the size limits (``PostgresSharing/limits``), an entity
/// this model does not have, a relationship to an object that does not exist.
///
/// The server is shared with other people and programs (a colleague with `psql`, a script,
/// an older desktop), so nothing read from it is trusted: every pulled change, every row of
/// a resync or a join and every row a push brings back is checked before it touches the
/// store. One that fails is not written and is recorded here, and the rest flows on: the
/// cursor moves past it, and a later version of the same object that fits is taken as usual.
/// A local change whose values this model refuses (written with the `sqlite3` shell, say)
/// is not pushed, and is recorded the same way.
///
/// Rejected changes are kept in the store until dismissed (``SharingSession/rejectedChanges(after:)``).
///
/// ## Topics
/// - ``Direction``
/// - ``entity``
/// - ``globalID``
/// - ``version``
/// - ``key``
/// - ``reason``
public struct RejectedChange: Sendable, Hashable, CustomStringConvertible {
    /// Which way the change was going.
    public enum Direction: String, Sendable, Hashable {
        /// From the server: not written into this store.
        case pulled
        /// From this store: not sent to the server.
        case notPushed = "not pushed"
        /// From this store: sent, and refused by the server's row-level security (a row of
        /// another role's that only its owner may change, or one this role no longer sees,
        /// see `Ownership`); the store took the server's row back in its place.
        case refused
    }

    /// Its number in the store's list (nil before it is recorded).
    public var number: Int64?
    /// When it was refused.
    public var time: Date
    public var direction: Direction
    /// The entity the change names (perhaps one this model does not have).
    public var entity: String
    /// The object's global ID.
    public var globalID: UUID
    /// The object in this store, when it has it.
    public var objectID: ObjectID?
    /// The object's version on the server that the change carried (0 for a local change).
    public var version: Int64
    /// The attribute or relationship at fault, when it is one.
    public var key: String?
    /// Why, in words: "teamName must not be empty".
    public var reason: String

    public init(number: Int64? = nil, time: Date = Date(), direction: Direction, entity: String, globalID: UUID, objectID: ObjectID? = nil,
                version: Int64, key: String?, reason: String) {
        self.number = number
        self.time = time
        self.direction = direction
        self.entity = entity
        self.globalID = globalID
        self.objectID = objectID
        self.version = version
        self.key = key
        self.reason = reason
    }

    /// `Team 3f2a…, version 4 from the server, not taken: wins = "lots" is not an integer`.
    public var description: String {
        let id = globalID.uuidString.lowercased()
        switch direction {
        case .pulled: return "\(entity) \(id), version \(version) from the server, not taken: \(reason)"
        case .notPushed: return "\(entity) \(id), not sent to the server: \(reason)"
        case .refused: return "\(entity) \(id), refused by the server: \(reason)"
        }
    }
}

/// The largest values sharing takes from a server: a row over them is refused, as a
/// ``RejectedChange``, before it is read into the store (a 10 MB name would otherwise reach
/// every desktop's list).
public struct SharingLimits: Sendable, Hashable {
    /// The most bytes of one text or binary value (UTF-8 bytes for text): 1 MiB by default.
    public var valueBytes: Int
    /// The most bytes of one object's row as the server sends it: its row image (JSON) in
    /// the change log, its columns' values in a join's or a resync's read of the tables.
    /// 4 MiB by default.
    public var rowBytes: Int

    public init(valueBytes: Int = 1 << 20, rowBytes: Int = 4 << 20) {
        self.valueBytes = valueBytes
        self.rowBytes = rowBytes
    }
}

extension AttributeDescription {
    /// What keeps `value` from crossing between a store and the server: over
    /// ``SharingLimits/valueBytes``, or against the model's rules (the ones a save checks);
    /// nil when it fits. The rest of a sentence that starts with the attribute's name.
    ///
    /// A counter's `minValue`/`maxValue` are not checked here: its value on the server is the
    /// sum of every desktop's additions, each checked where it was saved, and concurrent ones
    /// may take it past them; refusing the sum would leave every desktop's base behind and
    /// its additions sent again.
    func sharingFailure(of value: Value, limits: SharingLimits) -> String? {
        let size: Int? = switch value {
        case .string(let text): text.utf8.count
        case .binary(let data): data.count
        default: nil
        }
        if let size, size > limits.valueBytes {
            return "is \(size) bytes, over the limit of \(limits.valueBytes) (SharingLimits.valueBytes)"
        }
        guard isCounter else { return validationFailures(of: value).first }
        var sum = self
        (sum.minValue, sum.maxValue) = (nil, nil)
        return sum.validationFailures(of: value).first
    }
}
