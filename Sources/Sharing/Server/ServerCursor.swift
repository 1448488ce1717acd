/// A place in the server's change log: the changes after it are the ones not read yet.
///
/// Changes are ordered by the ID of the transaction that wrote them, then by their sequence
/// number. A cursor holds the last change read; ``ServerChangeLog`` hands out only changes of
/// transactions older than every transaction still running, so no change ever appears
/// behind a cursor that has passed its place (see ``ServerChangeLog``).
///
/// ## Topics
/// - ``start``
/// - ``transaction``
/// - ``sequence``
package struct ServerCursor: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The ID (PostgreSQL's `xid8`) of the transaction of the last change read.
    package var transaction: UInt64
    /// The sequence number of the last change read.
    package var sequence: Int64

    package init(transaction: UInt64, sequence: Int64) {
        self.transaction = transaction
        self.sequence = sequence
    }

    /// Before every change.
    package static let start = ServerCursor(transaction: 0, sequence: 0)

    package static func < (lhs: ServerCursor, rhs: ServerCursor) -> Bool {
        (lhs.transaction, lhs.sequence) < (rhs.transaction, rhs.sequence)
    }

    package var description: String { "\(transaction):\(sequence)" }
}
