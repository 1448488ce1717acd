import Foundation
import Logging
import ObjectStore
import PostgresNIO

/// Reads the server's change log with a commit-safe cursor.
///
/// Sequence numbers and transaction IDs are handed out when a row is written, not when its
/// transaction commits: a transaction that wrote change 7 may commit after another wrote
/// and committed change 8. A reader that had read up to 8 and went on from `seq > 8`
/// would never see 7. ``pull(after:limit:on:logger:)`` therefore reads only changes of
/// transactions older than the oldest one still running
/// (`txid < pg_snapshot_xmin(pg_current_snapshot())`): every such transaction has ended, its
/// changes are all visible or were rolled back, and any change written later belongs to a
/// newer transaction, so it sorts after the cursor. Changes of a transaction that is still
/// running, or that began before one still running, wait for the next pull.
///
/// A pull returns whole transactions: it stops at a transaction's end, even past `limit`,
/// so that a reader can apply each page in one local transaction of its own.
///
/// ## Topics
/// - ``init(model:)``
/// - ``pull(after:limit:on:logger:)``
/// - ``Page``
public struct ServerChangeLog: Sendable {
    /// The changes of one pull, and the cursor to pull from next.
    public struct Page: Sendable, Hashable {
        /// The changes, in the log's order: by transaction ID, then sequence number.
        public var changes: [ServerChange]
        /// The last change's place, or the cursor pulled from when there was none.
        public var cursor: ServerCursor
    }

    /// The model that tells the types of the values in the log.
    public let model: Model

    public init(model: Model) {
        self.model = model
    }

    /// The changes after `cursor` of every transaction that can no longer add any, in
    /// whole transactions: at least `limit` changes when there are that many, more when the
    /// last transaction goes on past them.
    public func pull(after cursor: ServerCursor, limit: Int = 1000, on connection: PostgresConnection, logger: Logger) async throws -> Page {
        let log = ServerNames.quoted(ServerNames.changeLog)
        let transaction = String(cursor.transaction)
        // One statement, so one snapshot: the horizon and the rows agree.
        let query: PostgresQuery = """
            WITH horizon AS MATERIALIZED (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
            page AS (
                SELECT c.txid FROM \(unescaped: log) c, horizon
                WHERE (c.txid, c.seq) > (\(transaction)::xid8, \(cursor.sequence)) AND c.txid < horizon.xmin
                ORDER BY c.txid, c.seq LIMIT \(max(1, limit))
            )
            SELECT c.txid::text, c.seq, c.entity, c.object, c.op, c.version, c.changed, c."row"::text
            FROM \(unescaped: log) c, horizon
            WHERE (c.txid, c.seq) > (\(transaction)::xid8, \(cursor.sequence)) AND c.txid < horizon.xmin
                AND c.txid <= (SELECT max(txid) FROM page)
            ORDER BY c.txid, c.seq
            """
        var changes: [ServerChange] = []
        let rows = try await connection.query(query, logger: logger)
        for try await (txid, seq, entity, object, op, version, changed, row) in rows.decode((String, Int64, String, UUID, String, Int64, [String]?, String?).self) {
            guard let transaction = UInt64(txid), let kind = ServerChange.Kind(rawValue: op) else {
                throw SharingError.unreadableChange(entity: entity, object: object, reason: "transaction \(txid), operation \(op)")
            }
            changes.append(ServerChange(
                cursor: ServerCursor(transaction: transaction, sequence: seq), entity: entity, object: object, kind: kind,
                version: version, changedProperties: changed ?? [],
                values: try row.map { try values(ofRow: $0, entity: entity, object: object) } ?? [:]))
        }
        return Page(changes: changes, cursor: changes.last?.cursor ?? cursor)
    }

    /// The values of a row image: each attribute and stored to-one relationship that the
    /// model knows, read as its type. Columns of a newer model are left out.
    private func values(ofRow json: String, entity entityName: String, object: UUID) throws -> [String: Value] {
        guard let entity = model.entity(named: entityName) else { return [:] }
        let row: [String: JSONScalar]
        do {
            row = try JSONDecoder().decode([String: JSONScalar].self, from: Data(json.utf8))
        } catch {
            throw SharingError.unreadableChange(entity: entityName, object: object, reason: "row \(json): \(error)")
        }
        var values: [String: Value] = [:]
        for attribute in entity.attributes {
            guard let scalar = row[attribute.name] else { continue }
            guard let value = scalar.value(as: attribute.type) else {
                throw SharingError.unreadableChange(entity: entityName, object: object, reason: "\(attribute.name) = \(scalar) is not a \(attribute.type)")
            }
            values[attribute.name] = value
        }
        for relationship in entity.relationships where model.storesForeignKey(relationship, of: entity) {
            switch row[relationship.name] {
            case nil: continue
            case .null?: values[relationship.name] = .null
            case .string(let id)? where UUID(uuidString: id) != nil: values[relationship.name] = .string(id.lowercased())
            case let other?:
                throw SharingError.unreadableChange(entity: entityName, object: object, reason: "\(relationship.name) = \(other) is not a global ID")
            }
        }
        return values
    }
}
